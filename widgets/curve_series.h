#pragma once

#include "widgets/curve_smoothing.h"
#include "widgets/robust_range.h"

#include <QColor>
#include <QString>
#include <QVector>

#include <optional>

class QCPGraph;
class QCustomPlot;

namespace tb::widgets {

/// Whether `value` can be drawn on an axis: finite, and positive on a logarithmic one.
bool isDrawable(double value, bool logarithmic);

/// One named series of a CurvePlot: the graph of its raw values, the graph of its smoothed
/// values drawn over them while smoothing is on, its style, and the extremes of its values,
/// kept as points arrive so that following the data never scans a million points. Both graphs
/// belong to the QCustomPlot they were added to.
struct CurveSeries {
  QCPGraph* raw = nullptr;
  QCPGraph* smooth = nullptr;  ///< nullptr while smoothing is off
  QColor color;
  Qt::PenStyle style = Qt::SolidLine;
  bool visible = true;
  bool inLegend = true;
  QString label;  ///< legend text; the name when empty
  // Raw points already folded into the smoothed graph, and whether it must start over (data
  // replaced, or a point inserted before the end).
  int smoothedCount = 0;
  bool smoothFromScratch = true;
  EmaSmoother ema;
  // Extremes of the finite values (and of the positive ones, for a log axis).
  double minValue = 0.0;
  double maxValue = 0.0;
  double minPositive = 0.0;
  double maxPositive = 0.0;
  bool haveFinite = false;
  bool havePositive = false;

  /// Folds values just added into the extremes.
  void noteValues(const QVector<double>& ys);
  /// The extremes of every value of the raw graph again (after its values were replaced).
  void recomputeExtremes();
  /// Pens and dots: the raw curve in full colour, or faint behind the smoothed one while
  /// `smoothing` (the weight) is above 0; a dot on every point of a short series.
  void applyStyle(double smoothing);
  /// Brings the smoothed graph up to date with the raw one (continuing the average where the
  /// last call left it when only points past the end came), adding it to `plot` or removing it
  /// as `smoothing` says.
  void updateSmoothed(QCustomPlot* plot, double smoothing);
  /// The span of values the y axis should show for this series (in log10 units when `logY`):
  /// the bulk of the values when `ignoreOutliers`, else all of them; nullopt when no value can
  /// be drawn.
  std::optional<ValueRange> valueRange(bool logY, bool ignoreOutliers) const;
};

}  // namespace tb::widgets
