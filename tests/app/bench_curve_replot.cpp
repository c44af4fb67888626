// Replot time of CurvePlot with many points: 10 curves of 100k points (1M in all) and 10
// curves of 1M points (10M in all), raw and smoothed, in a 1200x700 plot. Prints the median
// and maximum of
//   first:  the first replot after the data arrived (smoothing computed from scratch),
//   live:   a replot after 100 new points per curve (what a running run costs per replot),
//   redraw: a replot with nothing new (a resize, a toggle).
// Runs offscreen unless a platform is chosen. Usage: tb_bench_curve_replot [repeats]
#include "widgets/curve_plot.h"

#include "widgets/qcustomplot_no_keywords.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QVector>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct Figures {
  double median = 0.0;
  double max = 0.0;
};

Figures summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.back()};
}

double timeReplot(tb::widgets::CurvePlot& plot) {
  QElapsedTimer timer;
  timer.start();
  plot.replotNow();
  return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

// A loss-like curve: decay, noise, a few spikes.
double value(int curve, int i) {
  const double noise = 0.05 * std::sin(i * 0.37 + curve) * std::cos(i * 0.011);
  const double spike = (i % 99991 == 0) ? 50.0 : 0.0;
  return (1.0 + curve) / (1.0 + 1e-5 * i) + noise + spike;
}

void run(int curves, int points, double smoothing, int repeats, bool antialiased) {
  tb::widgets::CurvePlot plot;
  plot.resize(1200, 700);
  plot.setSmoothing(smoothing);
  if (!antialiased) {
    plot.customPlot()->setNotAntialiasedElements(QCP::aeAll);
  }
  plot.show();
  QApplication::processEvents();
  for (int c = 0; c < curves; ++c) {
    QVector<double> xs(points);
    QVector<double> ys(points);
    for (int i = 0; i < points; ++i) {
      xs[i] = i;
      ys[i] = value(c, i);
    }
    plot.appendPoints(QStringLiteral("curve %1").arg(c), xs, ys);
  }
  std::vector<double> first{timeReplot(plot)};
  std::vector<double> live;
  std::vector<double> redraw;
  int next = points;
  for (int r = 0; r < repeats; ++r) {
    for (int c = 0; c < curves; ++c) {
      QVector<double> xs(100);
      QVector<double> ys(100);
      for (int i = 0; i < 100; ++i) {
        xs[i] = next + i;
        ys[i] = value(c, next + i);
      }
      plot.appendPoints(QStringLiteral("curve %1").arg(c), xs, ys);
    }
    next += 100;
    live.push_back(timeReplot(plot));
    redraw.push_back(timeReplot(plot));
  }
  const Figures l = summarise(live);
  const Figures d = summarise(redraw);
  std::printf(
      "%3d curves x %8d points  smoothing %.1f  %-5s  first %7.1f ms  live median %6.1f "
      "max %6.1f ms  redraw median %6.1f max %6.1f ms\n",
      curves, points, smoothing, antialiased ? "AA" : "no AA", first.front(), l.median, l.max,
      d.median, d.max);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  const int repeats = argc > 1 ? std::max(3, std::atoi(argv[1])) : 15;
  std::printf("CurvePlot replot in a 1200x700 plot (%d repeats)\n", repeats);
  for (const bool antialiased : {true, false}) {
    for (const int points : {100000, 1000000}) {
      for (const double smoothing : {0.0, 0.6}) {
        run(10, points, smoothing, repeats, antialiased);
      }
    }
  }
  return 0;
}
