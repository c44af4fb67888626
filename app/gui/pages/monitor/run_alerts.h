#pragma once

#include "app/control/run_metrics.h"
#include "core/event_protocol.h"

#include <QObject>
#include <QPair>
#include <QString>
#include <QVector>

#include <optional>

namespace tb::app {

class AlertBanner;
class MetricGrid;

/// The open run's alerts: its warning and error events, and an end without a word, as lines of
/// the AlertBanner; and the steps the serious ones happened at (non-finite steps, rollbacks,
/// skipped data, errors), as markers on the loss plot.
class RunAlerts : public QObject {
  Q_OBJECT

 public:
  /// Fills `banner`, which must outlive this object.
  explicit RunAlerts(AlertBanner* banner, QObject* parent = nullptr);

  /// Forgets every alert and marked step, and clears the banner.
  void clear();
  /// The banner lines and marked steps of `events` of the open run, whose step is `runStep`
  /// after them (RunFollower::step(); an error is placed there). True when the marked steps
  /// changed.
  bool addEvents(const QVector<core::Event>& events, std::optional<qint64> runStep);
  /// A trainer started on the run again: a later end without a word is alerted again.
  void trainerStarted() { m_interruptionAlerted = false; }
  /// The run ended at `lastStep` without a done event and no trainer holds its lock; alerted
  /// once until the run starts over or a trainer starts on it again.
  void alertInterrupted(qint64 lastStep);
  /// Whether any step is marked.
  bool hasMarks() const { return !m_marks.isEmpty(); }
  /// Puts the marked steps on the loss plot of `grid`, where the open run's `metrics` place them.
  void markSteps(MetricGrid& grid, const RunMetrics& metrics) const;

 private:
  void mark(qint64 step, const QString& code);

  AlertBanner* m_banner = nullptr;
  QVector<QPair<qint64, QString>> m_marks;  // (step, code)
  bool m_interruptionAlerted = false;
};

}  // namespace tb::app
