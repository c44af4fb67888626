#pragma once

#include "core/metrics_log.h"

#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>

#include <cstdint>
#include <limits>
#include <optional>

namespace tb::app {

/// The scalar series of one run, as rows of metrics.jsonl arrive: for every metric name, its
/// points (step, wall-clock time, value) in step order.
///
/// A row whose step is not past the last point of a series means the run went back (a rollback
/// after non-finite steps, or a resume from an earlier checkpoint): the points at and after that
/// step are dropped first, so the series shows the timeline the run actually continued on.
class RunMetrics {
 public:
  struct Series {
    QVector<double> steps;
    QVector<double> wallTimes;  ///< seconds since the Unix epoch; NaN where the row had none
    QVector<double> values;     ///< NaN for a non-finite value (null in the file)
    int size() const { return static_cast<int>(steps.size()); }
  };

  /// What append() changed: series that only grew (with the index of their first new point)
  /// and series whose earlier points were dropped (to be redrawn whole).
  struct Change {
    QHash<QString, int> appendedFrom;
    QStringList rewritten;
    QStringList added;  ///< names seen for the first time, in order
    bool isEmpty() const { return appendedFrom.isEmpty() && rewritten.isEmpty(); }
  };

  Change append(const QVector<core::MetricsRow>& rows);
  void clear();

  /// Metric names in the order they first appeared.
  QStringList names() const { return m_names; }
  /// The series called `name`, or nullptr.
  const Series* series(const QString& name) const;
  /// Rows appended since the last clear().
  qint64 rowCount() const { return m_rowCount; }
  /// The step of the last row, if any.
  std::optional<std::int64_t> lastStep() const;
  /// The wall-clock time of the first row that had one (NaN when none had).
  double startWallTime() const { return m_startWallTime; }
  /// Seconds between the run's first row and the first row at or after `step` (nullopt when
  /// no row with a wall time reaches `step`), not counting the time the run was stopped.
  std::optional<double> elapsedAtStep(std::int64_t step) const;

  /// How many times a trainer started on the run (hello events): a run stopped and resumed
  /// twice has three sessions. Returns whether the training time of some rows changed.
  bool setSessionCount(int sessions);
  int sessionCount() const { return m_sessions; }
  /// Seconds of training between the run's first row and `wallTime` (a row's wall time): the
  /// wall-clock time since the start, less the time the run was stopped between sessions, as
  /// W&B's "relative time (process)". Between two sessions the trainer wrote nothing, so each
  /// resume leaves the longest gaps between rows: the sessionCount() - 1 longest are taken as
  /// the stops, each counted as one ordinary row interval (the median).
  double trainingSeconds(double wallTime) const;
  /// The latest finite value of `name`, if any.
  std::optional<double> latestValue(const QString& name) const;

 private:
  struct RowTime {
    std::int64_t step;
    double wallTime;
  };

  QHash<QString, Series> m_series;
  QStringList m_names;
  // A stop between two sessions: rows at or after `resumedAt` (a wall time) count `excess`
  // seconds less.
  struct Pause {
    double resumedAt;
    double excess;
  };
  QVector<Pause> findPauses() const;

  QVector<RowTime> m_rowTimes;  // one per row with a finite wall time, step order
  QVector<Pause> m_pauses;      // ascending resumedAt
  int m_sessions = 1;
  qint64 m_rowCount = 0;
  double m_startWallTime = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace tb::app
