#include "app/gui/pages/monitor/followed_runs.h"

#include "app/control/run_follower.h"
#include "widgets/colours.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>

namespace tb::app {

FollowedRuns::FollowedRuns(QObject* parent) : QObject(parent) {}

FollowedRuns::~FollowedRuns() = default;

int FollowedRuns::indexOf(const FollowedRun* run) const {
  for (size_t i = 0; i < m_runs.size(); ++i) {
    if (m_runs[i].get() == run) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool FollowedRuns::contains(const QString& absolutePath) const {
  for (const auto& run : m_runs) {
    if (QDir::cleanPath(QFileInfo(run->path).absoluteFilePath()) == absolutePath) {
      return true;
    }
  }
  return false;
}

QStringList FollowedRuns::overlayPaths() const {
  QStringList paths;
  for (size_t i = 1; i < m_runs.size(); ++i) {
    paths.append(m_runs[i]->path);
  }
  return paths;
}

FollowedRun* FollowedRuns::add(const QString& path) {
  const int index = count();
  auto run = std::make_unique<FollowedRun>();
  run->path = path;
  run->label = QFileInfo(path).fileName();
  for (const auto& other : m_runs) {
    if (other->label == run->label) {
      run->label += QStringLiteral(" (%1)").arg(index + 1);
    }
  }
  run->follower = new RunFollower(this);
  FollowedRun* raw = run.get();
  m_runs.push_back(std::move(run));

  RunFollower* follower = raw->follower;
  connect(follower, &RunFollower::reset, this, [this, raw] { Q_EMIT reset(raw); });
  connect(follower, &RunFollower::rowsAppended, this,
          [this, raw](const QVector<core::MetricsRow>& rows) { Q_EMIT rowsAppended(raw, rows); });
  connect(follower, &RunFollower::eventsAppended, this,
          [this, raw](const QVector<core::Event>& events) { Q_EMIT eventsAppended(raw, events); });
  if (index == 0) {
    connect(follower, &RunFollower::codebookCountsChanged, this,
            &FollowedRuns::openRunCodebookChanged);
    connect(follower, &RunFollower::codebookCountsRead, this, &FollowedRuns::openRunCodebookRead);
    connect(follower, &RunFollower::referenceCodecChanged, this,
            &FollowedRuns::openRunReferenceCodecChanged);
    connect(follower, &RunFollower::settingsChanged, this, &FollowedRuns::openRunSettingsChanged);
  }
  follower->setRunDirectory(path);  // reads what is there now
  follower->start();
  return raw;
}

void FollowedRuns::removeLast() {
  delete m_runs.back()->follower;
  m_runs.pop_back();
}

void FollowedRuns::clear() {
  for (const auto& run : m_runs) {
    delete run->follower;
  }
  m_runs.clear();
}

QString FollowedRuns::seriesName(int runIndex, const QString& metric) const {
  if (runIndex <= 0 || runIndex >= count()) {
    return metric;
  }
  return QStringLiteral("%1 \u00b7 %2").arg(metric, m_runs[static_cast<size_t>(runIndex)]->label);
}

QColor FollowedRuns::color(int runIndex) { return widgets::colours::series(runIndex); }

void FollowedRuns::pollNow() {
  for (const auto& run : m_runs) {
    run->follower->poll();
  }
}

bool FollowedRuns::waitForReads(int timeoutMs) {
  QElapsedTimer clock;
  clock.start();
  // A delivery can ask for more (a new codebook file is read next), so look until all are idle.
  for (;;) {
    bool idle = true;
    for (const auto& run : m_runs) {
      if (run->follower->pendingReads() > 0) {
        idle = false;
        if (!run->follower->waitForReads(static_cast<int>(timeoutMs - clock.elapsed()))) {
          return false;
        }
      }
    }
    if (idle) {
      return true;
    }
  }
}

}  // namespace tb::app
