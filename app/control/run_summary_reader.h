#pragma once

#include <QDateTime>
#include <QString>
#include <QStringList>

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tb::app {

/// One row of the Runs browser: what a run directory says about itself.
struct RunSummary {
  /// Running: someone holds the trainer's lock. Otherwise the last event of events.jsonl
  /// decides: a done event gives Completed/Stopped/Failed; anything else is Interrupted (the
  /// trainer died, or the node did). New: neither events nor metrics were ever written.
  enum class Status { Running, Completed, Stopped, Failed, Interrupted, New };

  QString path;  ///< absolute run directory
  QString name;  ///< its folder name
  Status status = Status::New;
  std::optional<qint64> step;       ///< the run's step (RunStep: events, checkpoints, rows)
  std::optional<double> bestPsnr;   ///< highest valid/psnr (dB)
  std::optional<double> bestSsim;   ///< highest valid/ssim
  std::optional<double> bestLpips;  ///< lowest valid/lpips
  std::optional<double> bestRfid;   ///< lowest valid/rfid
  std::optional<double> bestRfvd;   ///< lowest valid/rfvd
  QDateTime modified;               ///< latest change of config, metrics or events
};

/// Reads RunSummary rows, cheaply enough to refresh a folder of runs every few seconds, also on
/// a network file system: metrics.jsonl is followed (core::MetricsFollower: only appended bytes
/// are read; truncation and replacement start it over), events.jsonl is read from its last
/// 64 KiB only, and the lock is probed with flock(LOCK_EX | LOCK_NB) on a descriptor of our own,
/// released at once.
class RunSummaryReader {
 public:
  RunSummaryReader();
  ~RunSummaryReader();
  RunSummaryReader(const RunSummaryReader&) = delete;
  RunSummaryReader& operator=(const RunSummaryReader&) = delete;

  /// True when `runDir` holds a config.json (what makes a folder a run directory) and is not a
  /// checkpoint folder (one with model.safetensors at its top, which holds a config.json too).
  static bool isRunDirectory(const QString& runDir);
  /// The run directories directly inside `folder` (cleaned absolute paths, by name): what a
  /// folder of runs, as TensorBoard's --logdir takes, holds.
  static QStringList runDirectoriesIn(const QString& folder);
  /// Reads (incrementally, for a path seen before) the summary of `runDir`.
  RunSummary read(const QString& runDir);
  /// Drops what is cached for every run directory but `runDirs` (runs no longer listed).
  void keepOnly(const QStringList& runDirs);

  /// True while another process holds the trainer's flock on `runDir`/.lock.
  static bool isLocked(const QString& runDir);
  /// What the end of an events.jsonl says (its last 64 KiB are read).
  struct EventsTail {
    /// The status of the last done event when it is the file's last event; nullopt when the
    /// file is missing or empty, "" when its last event is not a done.
    std::optional<std::string> lastDone;
    /// The run's step as the events read say it (RunStep::noteEvent over them, in order).
    std::optional<qint64> step;
  };
  static EventsTail readEventsTail(const QString& eventsFile);

  /// Name of a status: "running", "completed", "stopped", "failed", "interrupted", "new".
  static QString statusName(RunSummary::Status status);

 private:
  struct Cache;
  static const EventsTail& eventsTail(Cache& cache, const QString& eventsFile);
  static void readCheckpoints(Cache& cache, const QString& runDir);
  std::map<QString, std::unique_ptr<Cache>> m_cache;
};

}  // namespace tb::app
