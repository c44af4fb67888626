// CurvePlot: data reaches the graphs, many appends cost one replot, log axes switch, smoothing
// is TensorBoard's debiased EMA, the y range ignores outliers, markers stand where they should,
// and a million points still draw.
#include "widgets/curve_plot.h"

#include "widgets/curve_smoothing.h"
#include "widgets/qcustomplot_no_keywords.h"
#include "widgets/robust_range.h"

#include <QCheckBox>
#include <QImage>
#include <QObject>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

#include <cmath>
#include <limits>

using tb::widgets::CurvePlot;
using tb::widgets::EmaSmoother;

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

// Pixels inside the axis rect whose colour is close to `color` (the curve of that colour).
int pixelsNear(const QImage& image, const QRect& area, const QColor& color, int tolerance = 40) {
  int count = 0;
  for (int y = area.top(); y <= area.bottom(); ++y) {
    for (int x = area.left(); x <= area.right(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (std::abs(c.red() - color.red()) + std::abs(c.green() - color.green()) +
              std::abs(c.blue() - color.blue()) <
          tolerance) {
        ++count;
      }
    }
  }
  return count;
}

// The axis rect of `plot`'s QCustomPlot, in the coordinates of an image grabbed from `plot`.
QRect plotArea(const CurvePlot& plot) {
  const QCustomPlot* custom = plot.customPlot();
  const QRect rect = custom->axisRect()->rect().adjusted(2, 2, -2, -2);
  return QRect(custom->mapTo(&plot, rect.topLeft()), rect.size());
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
    // The axes follow the data. Outliers are ignored by default: the first point (2.0, twice
    // its neighbour) is clipped, but the steep start of the curve stays in view.
    QVERIFY(plot.customPlot()->xAxis->range().contains(0.0));
    QVERIFY(plot.customPlot()->xAxis->range().contains(999.0));
    QVERIFY(plot.customPlot()->yAxis->range().contains(1.5));
    QVERIFY(plot.customPlot()->yAxis->range().contains(2.0 / 1000.0));
    plot.setIgnoreOutliers(false);
    plot.replotNow();
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

  void emaMatchesTensorBoard() {
    // last_i = w last_{i-1} + (1 - w) y_i, divided by 1 - w^i: worked out by hand for w = 0.6.
    const QVector<double> smoothed = EmaSmoother::smooth({1.0, 2.0, 3.0}, 0.6);
    QCOMPARE(smoothed.size(), 3);
    QCOMPARE(smoothed[0], 1.0);  // debiased: the first value is kept
    QVERIFY(std::abs(smoothed[1] - 1.04 / 0.64) < 1e-12);
    QVERIFY(std::abs(smoothed[2] - 1.824 / 0.784) < 1e-12);
    // A constant stays constant; weight 0 changes nothing.
    for (double v : EmaSmoother::smooth({5.0, 5.0, 5.0, 5.0}, 0.9)) {
      QVERIFY(std::abs(v - 5.0) < 1e-12);
    }
    QCOMPARE(EmaSmoother::smooth({3.0, 1.0}, 0.0), QVector<double>({3.0, 1.0}));
    // A NaN is a gap and leaves the average alone.
    const QVector<double> gap =
        EmaSmoother::smooth({1.0, std::numeric_limits<double>::quiet_NaN(), 3.0}, 0.6);
    QVERIFY(std::isnan(gap[1]));
    QVERIFY(std::abs(gap[2] - 1.44 / 0.64) < 1e-12);
  }

  void smoothingDrawsTheRawCurveFaintBehind() {
    CurvePlot plot;
    QVector<double> xs, ys;
    for (int i = 0; i < 100; ++i) {
      xs.append(i);
      ys.append(i % 2 == 0 ? 1.0 : 3.0);  // noisy around 2
    }
    plot.setSeries(QStringLiteral("loss"), xs, ys);
    plot.replotNow();
    QVERIFY(plot.smoothedGraph(QStringLiteral("loss")) == nullptr);  // no smoothing, one graph
    QCOMPARE(plot.customPlot()->graphCount(), 1);

    plot.setSmoothing(0.9);
    plot.replotNow();
    QCPGraph* smooth = plot.smoothedGraph(QStringLiteral("loss"));
    QCPGraph* raw = plot.graph(QStringLiteral("loss"));
    QVERIFY(smooth != nullptr);
    QCOMPARE(smooth->dataCount(), 100);
    const QVector<double> expected = EmaSmoother::smooth(ys, 0.9);
    QCOMPARE(smooth->data()->at(99)->value, expected[99]);
    QVERIFY(std::abs(smooth->data()->at(99)->value - 2.0) < 0.2);     // the noise is averaged out
    QVERIFY(raw->pen().color().alpha() < 128);                        // raw: faint
    QCOMPARE(smooth->pen().color().alpha(), 255);                     // smoothed: full colour
    QCOMPARE(smooth->pen().color().rgb(), raw->pen().color().rgb());  // same hue
    QCOMPARE(plot.customPlot()->legend->itemCount(), 1);              // named once

    // Appends continue the average: the same values as smoothing everything at once.
    QVector<double> more;
    for (int i = 100; i < 150; ++i) {
      plot.appendPoint(QStringLiteral("loss"), i, i % 2 == 0 ? 1.0 : 3.0);
      ys.append(i % 2 == 0 ? 1.0 : 3.0);
    }
    plot.replotNow();
    QCOMPARE(smooth->dataCount(), 150);
    QVERIFY(std::abs(smooth->data()->at(149)->value - EmaSmoother::smooth(ys, 0.9)[149]) < 1e-12);
    // A point inserted before the end starts the average over, in x order.
    plot.appendPoint(QStringLiteral("loss"), 10.5, 100.0);
    plot.replotNow();
    QCOMPARE(smooth->dataCount(), 151);
    QVERIFY(smooth->data()->at(11)->value > smooth->data()->at(10)->value + 5.0);

    plot.setSmoothing(0.0);
    plot.replotNow();
    QVERIFY(plot.smoothedGraph(QStringLiteral("loss")) == nullptr);
    QCOMPARE(raw->pen().color().alpha(), 255);
  }

  void longCurvesAreSmoothedAlike() {
    // The weight means "for 1000 points" (TensorBoard's sample size); a longer curve gets the
    // weight that averages the same share of it, changing only when the length doubles.
    QCOMPARE(EmaSmoother::weightForPoints(0.6, 1000), 0.6);
    QCOMPARE(EmaSmoother::weightForPoints(0.6, 3000), std::pow(0.6, 0.25));
    QCOMPARE(EmaSmoother::weightForPoints(0.6, 4000), std::pow(0.6, 0.25));
    QCOMPARE(EmaSmoother::weightForPoints(0.6, 4001), std::pow(0.6, 0.125));
    QCOMPARE(EmaSmoother::weightForPoints(0.0, 1000000), 0.0);

    CurvePlot plot;
    QVector<double> xs, ys;
    for (int i = 0; i < 5000; ++i) {
      xs.append(i);
      ys.append(i % 2 == 0 ? 1.0 : -1.0);  // noise of amplitude 1 around 0
    }
    plot.setSeries(QStringLiteral("grad"), xs, ys);
    plot.setSmoothing(0.6);
    plot.replotNow();
    QCPGraph* smooth = plot.smoothedGraph(QStringLiteral("grad"));
    const QVector<double> expected = EmaSmoother::smooth(ys, std::pow(0.6, 0.125));
    QCOMPARE(smooth->data()->at(4999)->value, expected[4999]);
    double worst = 0.0;
    for (int i = 4000; i < 5000; ++i) {
      worst = std::max(worst, std::abs(smooth->data()->at(i)->value));
    }
    // 0.6 on the raw points would leave +-0.25; the scaled weight leaves +-0.03.
    QVERIFY2(worst < 0.05, qPrintable(QString::number(worst)));
  }

  void robustRangeIgnoresOneSpike() {
    QVector<double> values;
    for (int i = 0; i < 200; ++i) {
      values.append(1.0 - 0.004 * i);  // 1.0 down to 0.204
    }
    values[120] = 1e6;
    const auto robust = tb::widgets::robustValueRange(values);
    QVERIFY(robust.has_value());
    QVERIFY2(robust->upper < 1.5, qPrintable(QString::number(robust->upper)));
    QVERIFY(robust->lower <= 0.21);
    // Without a spike the whole range is kept: a decaying loss keeps its start.
    values[120] = 0.52;
    const auto clean = tb::widgets::robustValueRange(values);
    QCOMPARE(clean->upper, 1.0);
    QCOMPARE(clean->lower, values.last());
    // A handful of points: plain min and max.
    const auto few = tb::widgets::robustValueRange({1.0, 2.0, 1e6});
    QCOMPARE(few->upper, 1e6);
    QVERIFY(!tb::widgets::robustValueRange({std::numeric_limits<double>::quiet_NaN()}));
    // A loss that falls fast keeps its start: quantiles alone would cut the first 2 % off.
    QVector<double> hyperbola;
    for (int i = 0; i < 1000; ++i) {
      hyperbola.append(2.0 / (1.0 + i));
    }
    QVERIFY(tb::widgets::robustValueRange(hyperbola)->upper > 1.6);
    // The running median: a one-point spike goes, the ends follow the trend (Tukey).
    QCOMPARE(tb::widgets::runningMedian3({1, 2, 100, 4, 5}), QVector<double>({1, 2, 4, 5, 5}));
    QCOMPARE(tb::widgets::runningMedian3({100, 2, 3, 4}).at(0), 3.0);

    CurvePlot plot;
    plot.resize(640, 400);
    QVector<double> xs;
    for (int i = 0; i < values.size(); ++i) {
      xs.append(i);
    }
    values[120] = 1e6;
    plot.setSeries(QStringLiteral("loss"), xs, values);
    QVERIFY(plot.ignoresOutliers());
    plot.replotNow();
    QVERIFY2(plot.customPlot()->yAxis->range().upper < 2.0,
             qPrintable(QString::number(plot.customPlot()->yAxis->range().upper)));
    QVERIFY(plot.customPlot()->yAxis->range().contains(0.3));
    plot.setIgnoreOutliers(false);
    plot.replotNow();
    QVERIFY(plot.customPlot()->yAxis->range().upper >= 1e6);
  }

  void logXTogglesTheAxisScale() {
    CurvePlot plot;
    QSignalSpy changed(&plot, &CurvePlot::logXChanged);
    auto* toggle = plot.findChild<QCheckBox*>(QStringLiteral("logXToggle"));
    QVERIFY(toggle != nullptr);
    plot.setSeries(QStringLiteral("loss"), {0, 1, 10, 100, 1000}, {5, 4, 3, 2, 1});
    toggle->click();
    QVERIFY(plot.isLogX());
    QCOMPARE(plot.customPlot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
    QCOMPARE(changed.count(), 1);
    plot.replotNow();
    // Step 0 has no place on a log axis: the range starts at the first positive step.
    const QCPRange range = plot.customPlot()->xAxis->range();
    QVERIFY2(range.lower > 0 && range.lower <= 1 && range.upper >= 1000,
             qPrintable(QStringLiteral("%1..%2").arg(range.lower).arg(range.upper)));
    plot.setLogX(false);
    QCOMPARE(plot.customPlot()->xAxis->scaleType(), QCPAxis::stLinear);
    QVERIFY(!toggle->isChecked());
    QCOMPARE(changed.count(), 2);
  }

  void timeAxisShowsDurations() {
    CurvePlot plot;
    plot.setTimeAxis(true);
    QVERIFY(!plot.customPlot()->xAxis->ticker().dynamicCast<QCPAxisTickerTime>().isNull());
    plot.setLogX(true);
    QVERIFY(!plot.customPlot()->xAxis->ticker().dynamicCast<QCPAxisTickerLog>().isNull());
    plot.setLogX(false);  // back to the duration ticker, not plain numbers
    QVERIFY(!plot.customPlot()->xAxis->ticker().dynamicCast<QCPAxisTickerTime>().isNull());
    plot.setTimeAxis(false);
    QVERIFY(plot.customPlot()->xAxis->ticker().dynamicCast<QCPAxisTickerTime>().isNull());
  }

  void markersStandAtTheirStep() {
    CurvePlot plot;
    plot.resize(640, 400);
    plot.setSeries(QStringLiteral("loss"), {0, 100, 200}, {1, 0.5, 0.25});
    QVERIFY(
        plot.setMarker(QStringLiteral("discr"), 100, QStringLiteral("GAN starts"), Qt::darkGray));
    QVERIFY(plot.setMarker(QStringLiteral("alert:0"), 150, {}, Qt::red, Qt::SolidLine));
    QCOMPARE(plot.markerIds().size(), 2);
    QCOMPARE(plot.markerPosition(QStringLiteral("discr")).value(), 100.0);
    QCOMPARE(plot.markerLabel(QStringLiteral("discr")), QStringLiteral("GAN starts"));
    QVERIFY(plot.setMarker(QStringLiteral("discr"), 120, QStringLiteral("GAN starts"),
                           Qt::darkGray));  // moved, not added
    QCOMPARE(plot.markerIds().size(), 2);
    QCOMPARE(plot.markerPosition(QStringLiteral("discr")).value(), 120.0);
    QCOMPARE(plot.customPlot()->itemCount(), 4);  // a line and a label each

    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.replotNow();
    const QImage image = plot.grab().toImage();
    // The red marker is a vertical line: red pixels in the column of x = 150, top to bottom.
    const int column =
        plot.customPlot()
            ->mapTo(&plot, QPoint(static_cast<int>(plot.customPlot()->xAxis->coordToPixel(150)), 0))
            .x();
    const QRect area = plotArea(plot);
    int red = 0;
    for (int y = area.top(); y <= area.bottom(); ++y) {
      for (int dx = -1; dx <= 1; ++dx) {
        const QColor c = image.pixelColor(column + dx, y);
        // Antialiased across two pixel columns: reddish rather than pure red.
        if (c.red() > 180 && c.red() - c.green() > 60 && c.red() - c.blue() > 60) {
          ++red;
          break;
        }
      }
    }
    QVERIFY2(red > area.height() / 2, qPrintable(QStringLiteral("%1 red rows").arg(red)));

    plot.clearMarkers(QStringLiteral("alert:"));
    QCOMPARE(plot.markerIds(), QStringList{QStringLiteral("discr")});
    QVERIFY(plot.removeMarker(QStringLiteral("discr")));
    QVERIFY(!plot.removeMarker(QStringLiteral("discr")));
    QCOMPARE(plot.customPlot()->itemCount(), 0);
    for (int i = 0; i < CurvePlot::kMaxMarkers; ++i) {
      QVERIFY(plot.setMarker(QStringLiteral("m%1").arg(i), i, {}, Qt::red));
    }
    QVERIFY(!plot.setMarker(QStringLiteral("one too many"), 0, {}, Qt::red));
  }

  void overlaidSeriesKeepTheirStyleAndHide() {
    CurvePlot plot;
    plot.setSeriesStyle(QStringLiteral("loss"), QColor(0x1f77b4));
    plot.setSeriesStyle(QStringLiteral("loss \u00b7 other"), QColor(0x1f77b4), Qt::DashLine);
    plot.appendPoints(QStringLiteral("loss \u00b7 other"), {0, 1}, {2, 1});
    QCOMPARE(plot.graph(QStringLiteral("loss \u00b7 other"))->pen().style(), Qt::DashLine);
    QCOMPARE(plot.seriesColor(QStringLiteral("loss")), QColor(0x1f77b4));
    QVERIFY(plot.setSeriesVisible(QStringLiteral("loss \u00b7 other"), false));
    plot.replotNow();
    QVERIFY(!plot.graph(QStringLiteral("loss \u00b7 other"))->visible());
    QVERIFY(!plot.isSeriesVisible(QStringLiteral("loss \u00b7 other")));
    QCOMPARE(plot.customPlot()->legend->itemCount(), 1);
    QVERIFY(!plot.setSeriesVisible(QStringLiteral("nothing"), false));
  }

  void aMillionPointsAreDrawnAndSpikesClipped() {
    CurvePlot plot;
    plot.resize(800, 500);
    plot.setSmoothing(0.6);
    constexpr int kPoints = 1000000;
    QVector<double> xs(kPoints), ys(kPoints);
    for (int i = 0; i < kPoints; ++i) {
      xs[i] = i;
      ys[i] = 1.0 / (1.0 + 1e-5 * i) + 0.05 * std::sin(i * 0.37);
    }
    ys[kPoints / 2] = 1e9;  // one spike
    QVERIFY(plot.appendPoints(QStringLiteral("loss"), xs, ys));
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.replotNow();
    QCOMPARE(plot.pointCount(QStringLiteral("loss")), kPoints);
    QCOMPARE(plot.smoothedGraph(QStringLiteral("loss"))->dataCount(), kPoints);
    QVERIFY(plot.customPlot()->yAxis->range().upper < 10.0);  // the spike does not flatten it
    const QImage image = plot.grab().toImage();
    const QRect area = plotArea(plot);
    const int curve = pixelsNear(image, area, QColor(0x1f77b4));
    QVERIFY2(curve > area.width() / 2, qPrintable(QStringLiteral("%1 curve pixels").arg(curve)));
  }
};

QTEST_MAIN(TestCurvePlot)
#include "test_curve_plot.moc"
