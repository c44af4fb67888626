#pragma once
// The Monitor's panel catalogue: which plot of the grid each metric name (core/metric_names.h)
// is drawn in. Kept beside the names so that a metric the trainer starts writing finds its plot
// by reading one file; the window only lays the panels out and translates their titles.

#include <string>
#include <string_view>
#include <vector>

namespace tb::core {

/// One small plot of the Monitor's grid.
struct MetricPanel {
  const char* id;      ///< stable identifier, e.g. "loss" (object names, settings)
  const char* title;   ///< English title; the window translates it in context "MonitorPage"
  const char* yLabel;  ///< English y-axis label, translated the same way
  /// Metric names the panel takes: '*' matches any run of characters (slashes included).
  std::vector<const char*> patterns;
  bool smoothed;   ///< drawn with smoothing (validation metrics are averages already: false)
  bool wallClock;  ///< always over wall-clock time, whatever the x-axis choice
};

/// Every panel, in grid order; the last one ("other", pattern "*") takes any metric.
const std::vector<MetricPanel>& metricPanels();

/// The first panel (in catalogue order) with a pattern matching `metric`; never null, since the
/// last panel matches everything.
const MetricPanel& metricPanelOf(std::string_view metric);

/// '*' in `pattern` matches any run of characters; every other character matches itself.
bool metricPatternMatches(std::string_view pattern, std::string_view metric);

}  // namespace tb::core
