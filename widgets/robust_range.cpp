#include "widgets/robust_range.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tb::widgets {
namespace {

// Fewest finite values in which an inner point can be told apart as a spike.
constexpr int kMinimumForMedian = 5;

}  // namespace

double quantileOfSorted(const QVector<double>& sorted, double q) {
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<int>(std::floor(position));
  const int above = std::min(below + 1, static_cast<int>(sorted.size()) - 1);
  const double fraction = position - below;
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

QVector<double> runningMedian3(const QVector<double>& values) {
  const int n = static_cast<int>(values.size());
  if (n < 3) {
    return values;
  }
  auto median = [](double a, double b, double c) {
    return std::max(std::min(a, b), std::min(std::max(a, b), c));
  };
  QVector<double> out(n);
  for (int i = 1; i + 1 < n; ++i) {
    out[i] = median(values[i - 1], values[i], values[i + 1]);
  }
  out[0] = median(values[0], out[1], 3.0 * out[1] - 2.0 * out[2]);
  out[n - 1] = median(values[n - 1], out[n - 2], 3.0 * out[n - 2] - 2.0 * out[n - 3]);
  return out;
}

std::optional<ValueRange> robustValueRange(QVector<double> values, double lowQuantile,
                                           double highQuantile, double slack,
                                           int minimumForQuantiles) {
  values.erase(
      std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
      values.end());
  if (values.isEmpty()) {
    return std::nullopt;
  }
  const QVector<double> medians = runningMedian3(values);
  // Copied before the sort below moves the values around.
  const std::pair<double, double> ends = std::minmax(values.front(), values.back());
  std::sort(values.begin(), values.end());
  const ValueRange full{values.front(), values.back()};
  if (values.size() < minimumForQuantiles) {
    if (medians.size() < kMinimumForMedian) {
      return full;
    }
    // Too few points for quantiles, enough to tell a lone spike: the running median of the
    // inner points, and both ends as they are (a short loss curve keeps its start and its
    // newest point).
    const auto [innerLow, innerHigh] =
        std::minmax_element(medians.cbegin() + 1, medians.cend() - 1);
    return ValueRange{std::min(*innerLow, ends.first), std::max(*innerHigh, ends.second)};
  }
  const double low = quantileOfSorted(values, lowQuantile);
  const double high = quantileOfSorted(values, highQuantile);
  const double spread = high - low;
  const auto [medianLow, medianHigh] = std::minmax_element(medians.cbegin(), medians.cend());
  return ValueRange{std::max(full.lower, std::min(low - slack * spread, *medianLow)),
                    std::min(full.upper, std::max(high + slack * spread, *medianHigh))};
}

}  // namespace tb::widgets
