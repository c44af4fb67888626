#include "app/control/run_metrics.h"

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
  if (m_sessions > 1) {
    const QVector<Pause> pauses = findPauses();
    if (pauses.size() != m_pauses.size() ||
        !std::equal(pauses.cbegin(), pauses.cend(), m_pauses.cbegin(),
                    [](const Pause& a, const Pause& b) { return a.resumedAt == b.resumedAt; })) {
      // A longer gap than the one taken for a stop: the training times of earlier rows change.
      m_pauses = pauses;
      for (const QString& name : m_names) {
        if (!change.rewritten.contains(name)) change.rewritten.append(name);
        change.appendedFrom.remove(name);
      }
    }
  }
  return change;
}

bool RunMetrics::setSessionCount(int sessions) {
  sessions = std::max(1, sessions);
  if (sessions == m_sessions) return false;
  m_sessions = sessions;
  const QVector<Pause> before = m_pauses;
  m_pauses = sessions > 1 ? findPauses() : QVector<Pause>{};
  return before.size() != m_pauses.size() || !m_pauses.isEmpty();
}

QVector<RunMetrics::Pause> RunMetrics::findPauses() const {
  const int rows = static_cast<int>(m_rowTimes.size());
  if (rows < 2) return {};
  QVector<double> gaps(rows - 1);
  for (int i = 1; i < rows; ++i) gaps[i - 1] = m_rowTimes[i].wallTime - m_rowTimes[i - 1].wallTime;
  QVector<double> sorted = gaps;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const double typical = std::max(0.0, sorted[sorted.size() / 2]);
  // Indices of the sessions - 1 longest gaps, then in time order.
  QVector<int> order(rows - 1);
  for (int i = 0; i < order.size(); ++i) order[i] = i;
  const int stops = std::min(m_sessions - 1, static_cast<int>(order.size()));
  std::partial_sort(order.begin(), order.begin() + stops, order.end(),
                    [&gaps](int a, int b) { return gaps[a] > gaps[b]; });
  order.resize(stops);
  std::sort(order.begin(), order.end());
  QVector<Pause> pauses;
  for (int gap : order) {
    if (gaps[gap] > typical) pauses.append({m_rowTimes[gap + 1].wallTime, gaps[gap] - typical});
  }
  return pauses;
}

double RunMetrics::trainingSeconds(double wallTime) const {
  double seconds = wallTime - m_startWallTime;
  for (const Pause& pause : m_pauses) {
    if (pause.resumedAt > wallTime) break;
    seconds -= pause.excess;
  }
  return seconds;
}

void RunMetrics::clear() {
  m_series.clear();
  m_names.clear();
  m_rowTimes.clear();
  m_pauses.clear();
  m_sessions = 1;
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
  return trainingSeconds(it->wallTime);
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
