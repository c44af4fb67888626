#pragma once

#include <QVector>

#include <optional>

namespace tb::widgets {

/// A closed interval [lower, upper] of values on one axis.
struct ValueRange {
  double lower = 0.0;
  double upper = 0.0;
};

/// The range of `values` (in x order) that a plot should show when it ignores outliers: the
/// union of
///
/// - TensorBoard's "ignore outliers in chart scaling": the `lowQuantile` and `highQuantile`
///   quantiles (e.g. 0.02 and 0.98) widened by `slack` times their spread on each side, and
/// - the extremes of the running median of 3 (Tukey's end-point rule at both ends), which
///   removes isolated one-point spikes but keeps every sustained part of the curve, such as the
///   steep first steps of a loss that the quantiles alone would cut off,
///
/// never wider than the data's own minimum and maximum. One spike of 1e6 in a curve near 0.1
/// is left outside (drawn, but clipped by the axis); a decaying loss keeps its start.
///
/// Non-finite values are ignored. With fewer than `minimumForQuantiles` finite values (a short
/// run) the quantiles mean nothing: the range then spans the running median of 3 of the inner
/// points and both end points as they are, so a lone spike inside a short curve is still left
/// out while its first and newest points stay in view; fewer than 5 values give the plain
/// minimum and maximum. Returns
/// nullopt when there is no finite value. Sorts a copy: callers with millions of points pass a
/// sample taken at an even stride.
std::optional<ValueRange> robustValueRange(QVector<double> values, double lowQuantile = 0.02,
                                           double highQuantile = 0.98, double slack = 0.25,
                                           int minimumForQuantiles = 20);

/// The running median of 3 of `values`, with Tukey's end-point rule (the first value becomes
/// median(y0, s1, 3 s1 - 2 s2), the last likewise). Fewer than 3 values are returned as they are.
QVector<double> runningMedian3(const QVector<double>& values);

/// The linear-interpolated quantile q in [0, 1] of sorted, finite `sorted` (not empty).
double quantileOfSorted(const QVector<double>& sorted, double q);

}  // namespace tb::widgets
