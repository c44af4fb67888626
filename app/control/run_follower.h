#pragma once

#include "app/control/run_step.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "core/reference_codec_info.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QVector>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace tb::core {
struct RunConfig;
}

namespace tb::app {

class ConfigDocument;
class FileReadThread;

/// What the Monitor needs from a run's config.json (absent keys take core's defaults).
struct RunSettings {
  std::int64_t maxSteps = 0;        ///< train.max_steps
  std::int64_t discrStartStep = 0;  ///< loss.discr_start_step
  bool ganEnabled = false;          ///< loss.adversarial_weight > 0
  std::int64_t codebookSize = 0;    ///< model.quantizer.codebook_size
  bool operator==(const RunSettings& o) const {
    return maxSteps == o.maxSteps && discrStartStep == o.discrStartStep &&
           ganEnabled == o.ganEnabled && codebookSize == o.codebookSize;
  }
  bool operator!=(const RunSettings& o) const { return !(*this == o); }
};

/// Follows one run directory, live or finished, local or on a network file system, by polling
/// (every pollInterval() while started, or when poll() is called): new rows of metrics.jsonl
/// (through core::MetricsFollower), new events of events.jsonl (tailed the same way: byte offset
/// kept, a partial last line waits for its '\n', truncation, replacement and rewrites detected),
/// the codebook/step_N.safetensors files, config.json, the classic VQ reference
/// (reference/reference.json) and whether a trainer holds the run's lock. No inotify: a file system
/// that does not report changes (NFS, Lustre, sshfs) is followed the same way.
///
/// Files are read and parsed on a thread of the follower's own, and the follower's thread never
/// waits for them, so a slow or stalled file system, a FIFO where a file should be, or a long
/// metrics.jsonl read for the first time never freezes the window: the timer asks for a read
/// only when the previous one has finished, setRunDirectory(), poll() and
/// requestCodebookCounts() ask for one and return, and the results are delivered, in order, as
/// signals in the follower's thread. Destroying the follower does not wait for a stalled read
/// either: its thread ends (and deletes itself) once the read returns.
///
/// When metrics.jsonl or events.jsonl starts over (truncated, replaced, rewritten), the follower
/// emits reset() and then delivers the run again from the beginning, so a listener that clears
/// its state on reset() and appends on rowsAppended()/eventsAppended() always holds exactly the
/// files' content.
class RunFollower : public QObject {
  Q_OBJECT

 public:
  /// Poll period used unless setPollInterval() says otherwise, in milliseconds.
  static constexpr int kDefaultPollIntervalMs = 300;

  explicit RunFollower(QObject* parent = nullptr);
  ~RunFollower() override;

  /// Follows `path` from now on ("" follows nothing). Forgets what was read, emits reset(),
  /// and polls at once.
  void setRunDirectory(const QString& path);
  QString runDirectory() const;

  /// Polls now and then every pollInterval() until stop().
  void start();
  void stop();
  bool isActive() const;
  void setPollInterval(int milliseconds);
  int pollInterval() const;

  /// Rows delivered since the last reset.
  qint64 rowCount() const { return m_rowCount; }
  /// The step of the last row delivered, if any: rows come every train.log_every steps, so this
  /// trails the run (step() says where it is).
  std::optional<std::int64_t> lastRowStep() const { return m_lastRowStep; }
  /// The run's step (RunStep: its done event, else its last progress or checkpoint event, else
  /// its newest checkpoint folder, else its last row); nullopt while nothing says one. Known
  /// before rowsAppended() and eventsAppended() of the batch that moved it are emitted.
  std::optional<std::int64_t> step() const { return m_step.value(); }
  /// The latest progress event, the hello, the done and the (first) error event, if seen.
  std::optional<core::ProgressEvent> lastProgress() const { return m_lastProgress; }
  std::optional<core::HelloEvent> hello() const { return m_hello; }
  std::optional<core::DoneEvent> done() const { return m_done; }
  std::optional<core::ErrorEvent> error() const { return m_error; }
  /// Settings from config.json; nullopt while there is no readable config.json.
  std::optional<RunSettings> settings() const { return m_settings; }
  /// config.json as last read (UTF-8 text); empty while there is no readable config.json.
  QString configText() const { return m_configText; }
  /// config.json as last read, as a document (core's defaults while there is none).
  const ConfigDocument& config() const { return *m_config; }
  /// Whether a trainer held the run's lock (RunSummaryReader::isLocked) when the last read
  /// began; nullopt until the run has written rows or events (the lock is not probed before:
  /// a trainer that is starting must not meet the probe). Without the lock and without a done
  /// event, the run ended without a word.
  std::optional<bool> trainerHoldsLock() const { return m_trainerHoldsLock; }
  /// The classic VQ reference codec fitted for the run (reference/reference.json); nullopt
  /// while there is none that reads.
  std::optional<core::ReferenceCodecInfo> referenceCodec() const { return m_reference; }
  /// Steps that have a codebook/step_N.safetensors file, ascending.
  QList<qint64> codebookSteps() const;
  /// The codebook file of `step` ("" when there is none).
  QString codebookFile(qint64 step) const;
  /// When the trainer last wrote metrics.jsonl or events.jsonl (their newest modification
  /// time at the last poll); invalid while neither exists.
  QDateTime lastWrite() const { return m_lastWrite; }
  /// Lines that could not be read: metrics rows and events (since construction).
  std::size_t malformedMetricLines() const { return m_malformedMetricLines; }
  std::size_t malformedEventLines() const { return m_malformedEventLines; }
  /// How many times the run started over (reset() emitted for a file that changed under us).
  int restarts() const { return m_restarts; }

  /// Asks for the code use counts of `step` (codebookFile()), read on the follower's thread;
  /// codebookCountsRead() delivers them, after the reads asked for before.
  void requestCodebookCounts(qint64 step);

  /// Reads asked for and not delivered yet.
  int pendingReads() const;
  /// Runs the event loop until every read asked for so far has been delivered or `timeoutMs`
  /// has passed; true when none is left. For tests and scripts: the window never waits.
  bool waitForReads(int timeoutMs = 10000);

  /// Reads the int64 tensor "counts" of a codebook file (I32/U32/U64/I64 are accepted too).
  /// Returns nullopt, with the reason in `error` when given, for a missing or malformed file.
  static std::optional<QVector<qint64>> readCodebookCounts(const QString& file,
                                                           QString* error = nullptr);

 public Q_SLOTS:
  /// Asks for a read of whatever is new now (after any read already under way); what it finds
  /// is emitted when the read is done, and returns at once.
  void poll();

 Q_SIGNALS:
  /// Everything read so far is void (another run directory, or a file started over); what the
  /// run holds will be delivered again.
  void reset();
  /// New metrics rows, in file order.
  void rowsAppended(const QVector<tb::core::MetricsRow>& rows);
  /// New events, in file order (lines that do not decode are counted and skipped). The metric
  /// events an older trainer wrote are left out: they repeat metrics.jsonl, whose rows
  /// rowsAppended() delivers.
  void eventsAppended(const QVector<tb::core::Event>& events);
  /// codebook/step_`step`.safetensors appeared or changed.
  void codebookCountsChanged(qint64 step);
  /// config.json appeared or changed: settings() and configText() say what it says now.
  void settingsChanged();
  /// reference/reference.json appeared, changed or went: referenceCodec() says what it holds.
  void referenceCodecChanged();
  /// What requestCodebookCounts(`step`) read: the counts, or empty with the reason in `error`.
  void codebookCountsRead(qint64 step, const QVector<qint64>& counts, const QString& error);

 private:
  class Reader;
  struct Batch;
  class BatchQueue;

  void requestRead(bool fromTimer);
  void deliver();
  void apply(Batch& batch);
  void clearState();
  void noteEvent(const core::Event& event);
  static RunSettings settingsOf(const core::RunConfig& config);

  QString m_path;
  QTimer m_timer;
  std::shared_ptr<Reader> m_reader;
  // Batches read and not yet delivered, in read order; shared with the reading thread.
  std::shared_ptr<BatchQueue> m_queue;
  std::shared_ptr<std::atomic<bool>> m_reading;  // a timer read is under way
  FileReadThread* m_reads = nullptr;             // child: the reading thread
  quint64 m_generation = 0;  // bumped by setRunDirectory(): batches of older readers are dropped
  std::size_t m_malformedMetricLines = 0;
  std::size_t m_malformedEventLines = 0;
  qint64 m_rowCount = 0;
  std::optional<std::int64_t> m_lastRowStep;
  RunStep m_step;
  std::optional<core::ProgressEvent> m_lastProgress;
  std::optional<core::HelloEvent> m_hello;
  std::optional<core::DoneEvent> m_done;
  std::optional<core::ErrorEvent> m_error;
  ConfigDocument* m_config = nullptr;  // child: config.json as last read
  std::optional<RunSettings> m_settings;
  QString m_configText;
  std::optional<bool> m_trainerHoldsLock;
  std::optional<core::ReferenceCodecInfo> m_reference;
  QList<qint64> m_codebookSteps;
  QDateTime m_lastWrite;
  int m_restarts = 0;
};

}  // namespace tb::app

Q_DECLARE_METATYPE(tb::core::MetricsRow)
Q_DECLARE_METATYPE(tb::core::Event)
