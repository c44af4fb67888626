#include "app/run_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tb::app {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Drops the points at and after `step`; returns true when any were dropped.
bool dropFrom(RunMetrics::Series& series, std::int64_t step) {
  const auto first =
      std::lower_bound(series.steps.cbegin(), series.steps.cend(), static_cast<double>(step));
  const auto keep = static_cast<int>(first - series.steps.cbegin());
  if (keep == series.size()) {
    return false;
  }
  series.steps.resize(keep);
  series.wallTimes.resize(keep);
  series.values.resize(keep);
  return true;
}

}  // namespace

RunMetrics::Change RunMetrics::append(const QVector<core::MetricsRow>& rows) {
  Change change;
  for (const core::MetricsRow& row : rows) {
    ++m_rowCount;
    const double wall = row.wall_time;
    if (std::isfinite(wall)) {
      if (!std::isfinite(m_startWallTime)) {
        m_startWallTime = wall;
      }
      while (!m_rowTimes.isEmpty() && m_rowTimes.last().step > row.step) {
        m_rowTimes.removeLast();  // the run went back: those rows are no longer its history
      }
      if (m_rowTimes.isEmpty() || m_rowTimes.last().step < row.step) {
        m_rowTimes.append({row.step, wall});
      }
    }
    for (const auto& [stdName, value] : row.values) {
      const QString name = QString::fromStdString(stdName);
      auto it = m_series.find(name);
      if (it == m_series.end()) {
        it = m_series.insert(name, Series{});
        m_names.append(name);
        change.added.append(name);
      }
      Series& series = *it;
      if (!series.steps.isEmpty() && series.steps.last() >= static_cast<double>(row.step)) {
        if (dropFrom(series, row.step) && !change.rewritten.contains(name)) {
          change.rewritten.append(name);
          change.appendedFrom.remove(name);
        }
      }
      if (!change.rewritten.contains(name) && !change.appendedFrom.contains(name)) {
        change.appendedFrom.insert(name, series.size());
      }
      series.steps.append(static_cast<double>(row.step));
      series.wallTimes.append(std::isfinite(wall) ? wall : kNaN);
      series.values.append(std::isfinite(value) ? value : kNaN);
    }
  }
  return change;
}

void RunMetrics::clear() {
  m_series.clear();
  m_names.clear();
  m_rowTimes.clear();
  m_rowCount = 0;
  m_startWallTime = kNaN;
}

const RunMetrics::Series* RunMetrics::series(const QString& name) const {
  const auto it = m_series.constFind(name);
  return it == m_series.cend() ? nullptr : &*it;
}

std::optional<std::int64_t> RunMetrics::lastStep() const {
  std::optional<std::int64_t> last;
  for (const Series& series : m_series) {
    if (!series.steps.isEmpty()) {
      const auto step = static_cast<std::int64_t>(series.steps.last());
      last = last ? std::max(*last, step) : step;
    }
  }
  return last;
}

std::optional<double> RunMetrics::elapsedAtStep(std::int64_t step) const {
  const auto it = std::lower_bound(m_rowTimes.cbegin(), m_rowTimes.cend(), step,
                                   [](const RowTime& row, std::int64_t s) { return row.step < s; });
  if (it == m_rowTimes.cend()) {
    return std::nullopt;
  }
  return it->wallTime - m_startWallTime;
}

std::optional<double> RunMetrics::latestValue(const QString& name) const {
  const Series* found = series(name);
  if (found == nullptr) {
    return std::nullopt;
  }
  for (auto it = found->values.crbegin(); it != found->values.crend(); ++it) {
    if (std::isfinite(*it)) {
      return *it;
    }
  }
  return std::nullopt;
}

}  // namespace tb::app
