#pragma once

#include <QVector>

namespace tb::widgets {

/// TensorBoard's scalar smoothing: an exponential moving average with the start-up bias removed,
///
///   last_i = w * last_{i-1} + (1 - w) * y_i,  last_0 = 0,   smoothed_i = last_i / (1 - w^n_i)
///
/// where n_i counts the finite values seen so far. The debiasing makes the first smoothed value
/// equal the first raw value (a plain EMA would start near 0). Non-finite values (a NaN loss)
/// pass through unchanged and leave the average alone, so one bad step is a gap, not a curve
/// that is NaN from there on. Feed values in x order; the state allows appending without
/// recomputing what was smoothed before.
class EmaSmoother {
 public:
  /// Largest weight used (a window of about a million values).
  static constexpr double kMaxWeight = 0.999999;
  /// Points a weight is meant for: TensorBoard draws at most about this many points per curve
  /// and smooths those, so its slider means the same for 100 points and for a million.
  static constexpr int kReferencePoints = 1000;

  /// The weight that smooths a series of `points` values as much as `weight` smooths
  /// kReferencePoints of them: weight^(kReferencePoints / n), where n is `points` rounded up to
  /// a power of two (so a growing series changes its weight, and is smoothed again from its
  /// start, only when it doubles). `weight` itself for kReferencePoints points or fewer.
  static double weightForPoints(double weight, int points);

  /// `weight` is w in [0, 1): 0 leaves values unchanged, 0.99 smooths hard. Values outside are
  /// clamped to [0, kMaxWeight].
  explicit EmaSmoother(double weight = 0.0);

  double weight() const { return m_weight; }
  /// The smoothed value for the next raw value `y`.
  double next(double y);
  /// Forgets every value seen (the next one comes out unchanged).
  void reset();
  /// Finite values folded in so far.
  int count() const { return m_count; }

  /// Smooths a whole series with a fresh smoother.
  static QVector<double> smooth(const QVector<double>& values, double weight);

 private:
  double m_weight = 0.0;
  double m_last = 0.0;
  double m_weightPower = 1.0;  // w^count, kept as a product: pow() per point costs at 1M points
  int m_count = 0;
};

}  // namespace tb::widgets
