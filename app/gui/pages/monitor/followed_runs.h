#pragma once

#include "app/control/run_metrics.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"

#include <QColor>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>

#include <memory>
#include <vector>

namespace tb::app {

class RunFollower;

/// One run the Monitor follows, and what its follower has read of it so far.
struct FollowedRun {
  QString path;
  QString label;                    ///< the folder's name, made unique among the followed runs
  RunFollower* follower = nullptr;  ///< owned by FollowedRuns (QObject child)
  RunMetrics metrics;
  int hellos = 0;  ///< trainer sessions seen in events.jsonl
};

/// The runs the Monitor follows: the open run (index 0), then the runs overlaid on it for
/// comparison ("Overlay run…"), each with a RunFollower of its own. Passes on what the followers
/// read, naming the run: metrics rows and events of every run, and the codebook counts,
/// reference codec and settings of the open run alone (overlays are there to compare curves).
class FollowedRuns : public QObject {
  Q_OBJECT

 public:
  explicit FollowedRuns(QObject* parent = nullptr);
  ~FollowedRuns() override;

  int count() const { return static_cast<int>(m_runs.size()); }
  bool isEmpty() const { return m_runs.empty(); }
  /// Run `index` (0: the open run); index must be below count().
  FollowedRun& at(int index) const { return *m_runs[static_cast<size_t>(index)]; }
  /// The index of `run`, or -1 when it is not followed (any more).
  int indexOf(const FollowedRun* run) const;
  /// True when a followed run's directory is `absolutePath` (cleaned).
  bool contains(const QString& absolutePath) const;
  /// The directories of the overlaid runs, in the order they were added.
  QStringList overlayPaths() const;

  /// Follows run directory `path` as run count() (the open run when none is followed yet):
  /// reads what is there now (connected receivers see its reset first), then polls.
  FollowedRun* add(const QString& path);
  /// Stops following the last run; its follower is deleted.
  void removeLast();
  /// Stops following every run.
  void clear();

  /// The name of `metric`'s series in a plot: the metric itself for the open run,
  /// "metric · label" for an overlay.
  QString seriesName(int runIndex, const QString& metric) const;
  /// The colour of run `runIndex` (0: the open run) while runs are overlaid.
  static QColor color(int runIndex);

  /// Asks every follower for a read now, and returns.
  void pollNow();
  /// Runs the event loop until every follower has delivered what it was asked for, or
  /// `timeoutMs` has passed; true when all have.
  bool waitForReads(int timeoutMs);

 Q_SIGNALS:
  /// The run's files started over (or were read for the first time).
  void reset(tb::app::FollowedRun* run);
  void rowsAppended(tb::app::FollowedRun* run, const QVector<tb::core::MetricsRow>& rows);
  void eventsAppended(tb::app::FollowedRun* run, const QVector<tb::core::Event>& events);
  /// The open run's codebook counts: a file was added or rewritten (`step`), or was read.
  void openRunCodebookChanged(qint64 step);
  void openRunCodebookRead(qint64 step, const QVector<qint64>& counts, const QString& error);
  void openRunReferenceCodecChanged();
  void openRunSettingsChanged();

 private:
  std::vector<std::unique_ptr<FollowedRun>> m_runs;  // [0]: the open run, then overlays
};

}  // namespace tb::app
