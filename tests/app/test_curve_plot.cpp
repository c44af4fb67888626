// CurvePlot: data reaches the graphs, many appends cost one replot, log-y switches the axis.
#include "widgets/curve_plot.h"

#include "widgets/qcustomplot_no_keywords.h"

#include <QCheckBox>
#include <QImage>
#include <QObject>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

using tb::widgets::CurvePlot;

namespace {

int distinctColors(const QImage& image) {
  QSet<QRgb> colors;
  for (int y = 0; y < image.height(); y += 2) {
    for (int x = 0; x < image.width(); x += 2) {
      colors.insert(image.pixel(x, y));
    }
  }
  return static_cast<int>(colors.size());
}

}  // namespace

class TestCurvePlot : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void manyAppendsCauseOneReplot() {
    CurvePlot plot;
    plot.resize(640, 400);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    QTRY_VERIFY(!plot.isReplotPending());
    QSignalSpy afterReplot(plot.customPlot(), &QCustomPlot::afterReplot);
    QSignalSpy replotted(&plot, &CurvePlot::replotted);
    const int before = plot.replotCount();

    for (int step = 0; step < 1000; ++step) {
      plot.appendPoint(QStringLiteral("loss"), step, 2.0 / (1.0 + step));
    }
    QCOMPARE(plot.pointCount(QStringLiteral("loss")), 1000);
    QVERIFY(plot.isReplotPending());
    QCOMPARE(plot.replotCount(), before);  // nothing drawn yet

    QTRY_COMPARE(replotted.count(), 1);
    QVERIFY(!plot.isReplotPending());
    QCOMPARE(plot.replotCount(), before + 1);
    QVERIFY(afterReplot.count() >= 1);
    QTest::qWait(3 * plot.replotInterval());
    QCOMPARE(replotted.count(), 1);  // and no second one for the same data

    QCPGraph* graph = plot.graph(QStringLiteral("loss"));
    QVERIFY(graph != nullptr);
    QCOMPARE(graph->dataCount(), 1000);
    QCOMPARE(graph->data()->at(0)->key, 0.0);
    QCOMPARE(graph->data()->at(999)->value, 2.0 / 1000.0);
    // The axes follow the data.
    QVERIFY(plot.customPlot()->xAxis->range().contains(0.0));
    QVERIFY(plot.customPlot()->xAxis->range().contains(999.0));
    QVERIFY(plot.customPlot()->yAxis->range().contains(2.0));
  }

  void vectorsAppendAndReplace() {
    CurvePlot plot;
    QVERIFY(plot.appendPoints(QStringLiteral("lr"), {3, 1, 2}, {0.3, 0.1, 0.2}));
    QCOMPARE(plot.pointCount(QStringLiteral("lr")), 3);
    // QCustomPlot keeps points sorted by x whatever order they arrive in.
    QCOMPARE(plot.graph(QStringLiteral("lr"))->data()->at(0)->value, 0.1);

    QVERIFY(plot.setSeries(QStringLiteral("lr"), {10, 20}, {1.0, 2.0}));
    QCOMPARE(plot.pointCount(QStringLiteral("lr")), 2);
    QCOMPARE(plot.graph(QStringLiteral("lr"))->data()->at(1)->key, 20.0);

    QVERIFY(!plot.setSeries(QStringLiteral("lr"), {1, 2, 3}, {1.0}));
    QVERIFY(!plot.appendPoints(QStringLiteral("lr"), {1}, {}));
    QCOMPARE(plot.pointCount(QStringLiteral("lr")), 2);  // unchanged
    QVERIFY(!plot.appendPoints(QStringLiteral("other"), {1}, {}));
    QVERIFY(!plot.seriesNames().contains(QStringLiteral("other")));
  }

  void seriesAreNamedInOrderAndClear() {
    CurvePlot plot;
    QCOMPARE(plot.pointCount(QStringLiteral("none")), -1);
    QVERIFY(!plot.customPlot()->legend->visible());
    plot.appendPoint(QStringLiteral("train/loss"), 0, 1);
    plot.appendPoint(QStringLiteral("val/loss"), 0, 1);
    plot.appendPoint(QStringLiteral("train/loss"), 1, 0.5);
    QCOMPARE(plot.seriesNames(), QStringList({"train/loss", "val/loss"}));
    QCOMPARE(plot.customPlot()->graphCount(), 2);
    QVERIFY(plot.customPlot()->legend->visible());
    QVERIFY(plot.graph(QStringLiteral("train/loss"))->pen().color() !=
            plot.graph(QStringLiteral("val/loss"))->pen().color());

    QVERIFY(plot.removeSeries(QStringLiteral("val/loss")));
    QVERIFY(!plot.removeSeries(QStringLiteral("val/loss")));
    QCOMPARE(plot.seriesNames(), QStringList({"train/loss"}));
    QCOMPARE(plot.customPlot()->graphCount(), 1);

    plot.clear();
    QVERIFY(plot.seriesNames().isEmpty());
    QCOMPARE(plot.customPlot()->graphCount(), 0);
    QVERIFY(!plot.customPlot()->legend->visible());
    QVERIFY(plot.isReplotPending());
  }

  void logYTogglesTheAxisScale() {
    CurvePlot plot;
    QSignalSpy changed(&plot, &CurvePlot::logYChanged);
    auto* toggle = plot.findChild<QCheckBox*>(QStringLiteral("logYToggle"));
    QVERIFY(toggle != nullptr);
    QCOMPARE(plot.customPlot()->yAxis->scaleType(), QCPAxis::stLinear);
    QVERIFY(!plot.isLogY());

    plot.setLogY(true);
    QCOMPARE(plot.customPlot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY(plot.isLogY());
    QVERIFY(toggle->isChecked());
    QVERIFY(!plot.customPlot()->yAxis->ticker().dynamicCast<QCPAxisTickerLog>().isNull());
    QCOMPARE(changed.count(), 1);
    plot.setLogY(true);  // no change, no signal
    QCOMPARE(changed.count(), 1);

    toggle->click();  // the check box is the user's switch
    QCOMPARE(plot.customPlot()->yAxis->scaleType(), QCPAxis::stLinear);
    QVERIFY(plot.customPlot()->yAxis->ticker().dynamicCast<QCPAxisTickerLog>().isNull());
    QCOMPARE(changed.count(), 2);
    QCOMPARE(changed.last().at(0).toBool(), false);
  }

  void logYFollowsPositiveData() {
    CurvePlot plot;
    plot.resize(640, 400);
    plot.setSeries(QStringLiteral("loss"), {0, 1, 2}, {1e-3, 1e-1, 10});
    plot.setLogY(true);
    plot.replotNow();
    const QCPRange range = plot.customPlot()->yAxis->range();
    QVERIFY2(range.lower > 0 && range.lower <= 1e-3 && range.upper >= 10,
             qPrintable(QStringLiteral("%1..%2").arg(range.lower).arg(range.upper)));
  }

  void rendersCurves() {
    CurvePlot plot;
    plot.resize(640, 400);
    plot.setTitle(QStringLiteral("Loss"));
    QVector<double> xs, ys;
    for (int i = 0; i < 200; ++i) {
      xs.append(i);
      ys.append(1.0 / (1.0 + 0.05 * i));
    }
    plot.setSeries(QStringLiteral("loss"), xs, ys);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.replotNow();
    const QImage image = plot.grab().toImage();
    QVERIFY(!image.isNull());
    QVERIFY2(distinctColors(image) > 10, "the plot rendered as a flat image");
    // The series colour (Tableau blue) appears somewhere in the drawing.
    bool blue = false;
    for (int y = 0; y < image.height() && !blue; ++y) {
      for (int x = 0; x < image.width() && !blue; ++x) {
        const QColor c = image.pixelColor(x, y);
        blue = c.blue() > 150 && c.red() < 80 && c.green() > 90 && c.green() < 150;
      }
    }
    QVERIFY2(blue, "no pixel of the series colour");
  }
};

QTEST_MAIN(TestCurvePlot)
#include "test_curve_plot.moc"
