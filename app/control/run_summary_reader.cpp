#include "app/control/run_summary_reader.h"

#include "app/control/run_step.h"
#include "app/control/wire_text.h"
#include "core/checkpoint_files.h"
#include "core/event_protocol.h"
#include "core/metric_names.h"
#include "core/metrics_log.h"
#include "core/run_directory.h"
#include "core/run_lock.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cmath>
#include <variant>

namespace tb::app {
namespace {

// The tail of events.jsonl that is read for the last event. A done line is short; the margin
// covers the longest ordinary events (warnings with long paths, and the metric lines with many
// values that older trainers wrote there).
constexpr qint64 kEventsTailBytes = 64 * 1024;

void keepBest(std::optional<double>& best, double value, bool higherIsBetter) {
  if (!std::isfinite(value)) return;
  if (!best || (higherIsBetter ? value > *best : value < *best)) best = value;
}

}  // namespace

struct RunSummaryReader::Cache {
  explicit Cache(const QString& runDir) : follower(runDirectoryAt(runDir).metricsFile()) {}

  core::MetricsFollower follower;
  std::size_t resets = 0;
  RunStep step;  // events, checkpoints and rows: what the run's step is made of
  bool hasRows = false;
  std::optional<double> bestPsnr;
  std::optional<double> bestSsim;
  std::optional<double> bestLpips;
  std::optional<double> bestRfid;
  std::optional<double> bestRfvd;
  // events.jsonl is reread only when its size or time changes.
  qint64 eventsSize = -1;
  QDateTime eventsModified;
  EventsTail events;
  // checkpoints/ is listed again only when its time changes (a folder renamed in or removed).
  QDateTime checkpointsModified;
};

const RunSummaryReader::EventsTail& RunSummaryReader::eventsTail(Cache& cache,
                                                                 const QString& events) {
  const QFileInfo info(events);
  const qint64 size = info.exists() ? info.size() : -1;
  if (size != cache.eventsSize || info.lastModified() != cache.eventsModified) {
    cache.eventsSize = size;
    cache.eventsModified = info.lastModified();
    cache.events = readEventsTail(events);
  }
  return cache.events;
}

void RunSummaryReader::readCheckpoints(Cache& cache, const QString& runDir) {
  const core::RunDirectory run = runDirectoryAt(runDir);
  const QDateTime modified = QFileInfo(pathText(run.checkpointsDir())).lastModified();
  if (modified == cache.checkpointsModified) return;
  cache.checkpointsModified = modified;
  cache.step.setCheckpointSteps(run.listCheckpointSteps());
}

RunSummaryReader::RunSummaryReader() = default;
RunSummaryReader::~RunSummaryReader() = default;

bool RunSummaryReader::isRunDirectory(const QString& runDir) {
  const core::RunDirectory run = runDirectoryAt(runDir);
  // A checkpoint folder (`tokenbench-trainer init`, or a copied checkpoint) holds a config.json
  // too, beside its weights; a run keeps its weights in checkpoints/.
  return QFileInfo(pathText(run.configFile())).isFile() &&
         !QFileInfo::exists(pathText(run.root() / core::checkpoint_files::kModel));
}

QStringList RunSummaryReader::runDirectoriesIn(const QString& folder) {
  QStringList runs;
  for (const QFileInfo& entry :
       QDir(folder).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    const QString path = QDir::cleanPath(entry.absoluteFilePath());
    if (isRunDirectory(path)) runs.append(path);
  }
  return runs;
}

bool RunSummaryReader::isLocked(const QString& runDir) {
  return core::isRunLocked(runDirectoryAt(runDir).lockFile());
}

RunSummaryReader::EventsTail RunSummaryReader::readEventsTail(const QString& eventsFile) {
  EventsTail tail;
  QFile file(eventsFile);
  if (!file.open(QIODevice::ReadOnly) || file.size() == 0) {
    return tail;
  }
  const qint64 start = qMax<qint64>(0, file.size() - kEventsTailBytes);
  file.seek(start);
  QList<QByteArray> lines = file.readAll().split('\n');
  if (start > 0 && !lines.isEmpty()) {
    lines.removeFirst();  // cut in the middle
  }
  RunStep step;
  tail.lastDone = std::string();
  for (const QByteArray& text : lines) {
    const QByteArray line = text.trimmed();
    if (line.isEmpty()) continue;
    const core::DecodeResult decoded =
        core::decodeEventLine(std::string_view(line.constData(), static_cast<size_t>(line.size())));
    const core::Event* event = decoded.event();
    if (!event) continue;  // a torn or foreign line: the events around it decide
    step.noteEvent(*event);
    const auto* done = std::get_if<core::DoneEvent>(event);
    tail.lastDone = done ? done->status : std::string();
  }
  tail.step = step.value();
  return tail;
}

QString RunSummaryReader::statusName(RunSummary::Status status) {
  switch (status) {
    case RunSummary::Status::Running:
      return QStringLiteral("running");
    case RunSummary::Status::Completed:
      return QStringLiteral("completed");
    case RunSummary::Status::Stopped:
      return QStringLiteral("stopped");
    case RunSummary::Status::Failed:
      return QStringLiteral("failed");
    case RunSummary::Status::Interrupted:
      return QStringLiteral("interrupted");
    case RunSummary::Status::New:
      return QStringLiteral("new");
  }
  return {};
}

void RunSummaryReader::keepOnly(const QStringList& runDirs) {
  for (auto it = m_cache.begin(); it != m_cache.end();) {
    it = runDirs.contains(it->first) ? std::next(it) : m_cache.erase(it);
  }
}

RunSummary RunSummaryReader::read(const QString& runDir) {
  RunSummary summary;
  summary.path = QDir::cleanPath(QFileInfo(runDir).absoluteFilePath());
  summary.name = QFileInfo(summary.path).fileName();

  std::unique_ptr<Cache>& cache = m_cache[summary.path];
  if (!cache) cache = std::make_unique<Cache>(summary.path);
  std::vector<core::MetricsRow> rows = cache->follower.poll();
  if (cache->follower.resets() != cache->resets) {
    // The file was truncated or replaced: what was read before no longer counts.
    cache->resets = cache->follower.resets();
    cache->step.clearRows();
    cache->hasRows = false;
    cache->bestPsnr.reset();
    cache->bestSsim.reset();
    cache->bestLpips.reset();
    cache->bestRfid.reset();
    cache->bestRfvd.reset();
  }
  for (const core::MetricsRow& row : rows) {
    cache->step.noteRow(row.step);
    cache->hasRows = true;
    for (const auto& [name, value] : row.values) {
      if (name == core::metric::kValidPsnr)
        keepBest(cache->bestPsnr, value, true);
      else if (name == core::metric::kValidSsim)
        keepBest(cache->bestSsim, value, true);
      else if (name == core::metric::kValidLpips)
        keepBest(cache->bestLpips, value, false);
      else if (name == core::metric::kValidRfid)
        keepBest(cache->bestRfid, value, false);
      else if (name == core::metric::kValidRfvd)
        keepBest(cache->bestRfvd, value, false);
    }
  }
  summary.bestPsnr = cache->bestPsnr;
  summary.bestSsim = cache->bestSsim;
  summary.bestLpips = cache->bestLpips;
  summary.bestRfid = cache->bestRfid;
  summary.bestRfvd = cache->bestRfvd;

  const core::RunDirectory run = runDirectoryAt(summary.path);
  const EventsTail& events = eventsTail(*cache, pathText(run.eventsFile()));
  cache->step.setEventStep(events.step);
  readCheckpoints(*cache, summary.path);
  summary.step = cache->step.value();
  if (isLocked(summary.path)) {
    summary.status = RunSummary::Status::Running;
  } else if (const std::optional<std::string>& done = events.lastDone) {
    if (*done == "completed")
      summary.status = RunSummary::Status::Completed;
    else if (*done == "stopped")
      summary.status = RunSummary::Status::Stopped;
    else if (*done == "failed")
      summary.status = RunSummary::Status::Failed;
    else
      summary.status = RunSummary::Status::Interrupted;
  } else {
    summary.status = cache->hasRows ? RunSummary::Status::Interrupted : RunSummary::Status::New;
  }

  for (const std::filesystem::path& file :
       {run.configFile(), run.metricsFile(), run.eventsFile()}) {
    const QFileInfo info(pathText(file));
    if (info.exists() && (!summary.modified.isValid() || info.lastModified() > summary.modified)) {
      summary.modified = info.lastModified();
    }
  }
  return summary;
}

}  // namespace tb::app
