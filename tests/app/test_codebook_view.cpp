// CodebookView: counts in -> dead-code share, used codes, perplexity, the sorted histogram drawn
// on a log axis with the dead codes shaded, and the step chooser's requests.
#include "widgets/codebook_view.h"

#include "app/control/run_follower.h"
#include "core/safetensors.h"
#include "widgets/curve_plot.h"
#include "widgets/qcustomplot_no_keywords.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstdint>
#include <vector>

using tb::widgets::CodebookView;

namespace {

QRect histogramArea(const CodebookView& view) {
  const QCustomPlot* plot = view.histogramPlot();
  const QRect rect = plot->axisRect()->rect().adjusted(2, 2, -2, -2);
  return QRect(plot->mapTo(&view, rect.topLeft()), rect.size());
}

}  // namespace

class TestCodebookView : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void startsEmpty() {
    CodebookView view;
    QCOMPARE(view.shownStep(), -1);
    QCOMPARE(view.codebookSize(), 0);
    QVERIFY(std::isnan(view.deadCodeShare()));
    QCOMPARE(view.deadShareText(), QStringLiteral("\u2014"));
    auto* empty = view.findChild<QLabel*>(QStringLiteral("codebookEmpty"));
    QVERIFY(empty != nullptr);
    view.resize(900, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(empty->isVisible());
    QVERIFY(!view.histogramPlot()->isVisible());
  }

  void countsFromASafetensorsFile() {
    // The file the trainer writes: int64 "counts" [codebook size], written with core's writer.
    QTemporaryDir run;
    QVERIFY(QDir(run.path()).mkpath(QStringLiteral("codebook")));
    const std::vector<std::int64_t> counts = {10, 0, 5, 0, 1, 0, 0, 0};
    tb::core::SafetensorsWriter writer;
    writer.add("counts", tb::core::DType::I64, {8}, counts.data(), counts.size() * 8);
    const QString file = run.filePath(QStringLiteral("codebook/step_40.safetensors"));
    writer.writeFile(QFile::encodeName(file).toStdString());
    const auto read = tb::app::RunFollower::readCodebookCounts(file);
    QVERIFY(read.has_value());

    CodebookView view;
    view.resize(1000, 640);
    view.setCounts(40, *read);
    QCOMPARE(view.shownStep(), 40);
    QCOMPARE(view.codebookSize(), 8);
    QCOMPARE(view.usedCodes(), 3);
    QCOMPARE(view.deadCodeShare(), 5.0 / 8.0);
    QCOMPARE(view.deadShareText(), QStringLiteral("62.5 %"));
    // exp(entropy) of (10, 5, 1) / 16.
    double entropy = 0.0;
    for (double c : {10.0, 5.0, 1.0}) {
      entropy -= c / 16.0 * std::log(c / 16.0);
    }
    QVERIFY(std::abs(view.perplexity() - std::exp(entropy)) < 1e-12);
    QCOMPARE(view.availableSteps(), QList<qint64>{40});
    auto* detail = view.findChild<QLabel*>(QStringLiteral("deadDetail"));
    QVERIFY(detail->text().contains(QLatin1String("5 of 8 codes")));
    // Sorted, most used first; dead codes are not on the log axis (the shading stands for them).
    QCPGraph* graph = view.histogramGraph();
    QCOMPARE(graph->dataCount(), 4);
    QCOMPARE(graph->data()->at(0)->value, 10.0);
    QCOMPARE(graph->data()->at(1)->value, 5.0);
    QCOMPARE(graph->data()->at(2)->value, 1.0);
    QCOMPARE(view.histogramPlot()->yAxis->scaleType(), QCPAxis::stLogarithmic);

    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QImage image = view.grab().toImage();
    const QRect area = histogramArea(view);
    // Left of the dead region: the blue fill of the bars; right of it: the red shading.
    int blue = 0;
    int red = 0;
    const int deadStart =
        view.histogramPlot()
            ->mapTo(&view,
                    QPoint(static_cast<int>(view.histogramPlot()->xAxis->coordToPixel(3.0)), 0))
            .x();
    for (int y = area.top(); y <= area.bottom(); y += 2) {
      for (int x = area.left(); x <= area.right(); x += 2) {
        const QColor c = image.pixelColor(x, y);
        if (x < deadStart && c.blue() > c.red() + 40) {
          ++blue;
        }
        if (x > deadStart + 2 && c.red() > c.blue() + 8 && c.red() > c.green() + 8) {
          ++red;
        }
      }
    }
    QVERIFY2(blue > 50, qPrintable(QStringLiteral("%1 blue pixels").arg(blue)));
    QVERIFY2(red > 200, qPrintable(QStringLiteral("%1 red pixels").arg(red)));
  }

  void followsNewStepsUntilTheUserPicksOne() {
    CodebookView view;
    QSignalSpy requested(&view, &CodebookView::stepRequested);
    view.setAvailableSteps({20});
    QCOMPARE(requested.count(), 1);  // nothing shown yet: ask for the newest
    QCOMPARE(requested.last().at(0).toLongLong(), 20);
    view.setCounts(20, {1, 2, 3, 0});
    QVERIFY(view.followsLatest());
    view.setAvailableSteps({20, 60, 40});
    QCOMPARE(requested.count(), 2);
    QCOMPARE(requested.last().at(0).toLongLong(), 60);
    view.setCounts(60, {1, 1, 1, 1});
    QCOMPARE(view.deadCodeShare(), 0.0);
    QCOMPARE(view.deadShareText(), QStringLiteral("0.0 %"));

    // The user picks an older step: it is requested, and newer steps no longer pull the view.
    auto* chooser = view.findChild<QComboBox*>(QStringLiteral("codebookStep"));
    QVERIFY(chooser != nullptr);
    QCOMPARE(chooser->count(), 3);
    QCOMPARE(chooser->currentData().toLongLong(), 60);
    QVERIFY(QMetaObject::invokeMethod(chooser, "activated", Q_ARG(int, 0)));
    QCOMPARE(requested.last().at(0).toLongLong(), 20);
    view.setCounts(20, {1, 2, 3, 0});
    QVERIFY(!view.followsLatest());
    const int before = requested.count();
    view.setAvailableSteps({20, 40, 60, 80});
    QCOMPARE(requested.count(), before);
    QCOMPARE(chooser->currentData().toLongLong(), 20);
  }

  void curvesOverTheRun() {
    CodebookView view;
    view.appendPerplexity(100, 12.5);
    view.appendPerplexity(200, 20.0);
    view.appendUsage(100, 0.25);
    QCOMPARE(view.perplexityPlot()->seriesNames().size(), 1);
    QCOMPARE(view.perplexityPlot()->pointCount(view.perplexityPlot()->seriesNames().first()), 2);
    const QString usage = view.usagePlot()->seriesNames().first();
    QCOMPARE(view.usagePlot()->graph(usage)->data()->at(0)->value, 25.0);  // per cent
    view.setCurvesXAxis(QStringLiteral("time"), true);
    QVERIFY(view.perplexityPlot()->isTimeAxis());
    view.clear();
    QVERIFY(view.perplexityPlot()->seriesNames().isEmpty());
    QCOMPARE(view.shownStep(), -1);
    QVERIFY(view.availableSteps().isEmpty());
  }
};

QTEST_MAIN(TestCodebookView)
#include "test_codebook_view.moc"
