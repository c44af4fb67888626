#include "app/control/run_follower.h"

#include "app/control/config_document.h"
#include "app/control/file_read_thread.h"
#include "app/control/run_summary_reader.h"
#include "app/control/wire_text.h"
#include "core/config_io.h"
#include "core/file_tail.h"
#include "core/run_directory.h"
#include "core/safetensors.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QMutexLocker>
#include <QRegularExpression>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace tb::app {

/// What one read found: everything the follower delivers, in the order it delivers it.
struct RunFollower::Batch {
  quint64 generation = 0;
  bool restarted = false;  // a file started over: reset(), then this batch from the beginning
  std::vector<core::MetricsRow> rows;
  QVector<core::Event> events;
  std::size_t malformedMetricLines = 0;  // new since the previous batch
  std::size_t malformedEventLines = 0;
  std::optional<QString> configText;     // set when config.json's text changed
  std::optional<bool> trainerHoldsLock;  // probed before the files were read, once active
  // Set when reference/reference.json appeared, changed or went (then it holds nullopt).
  std::optional<std::optional<core::ReferenceCodecInfo>> reference;
  QList<qint64> codebookSteps;    // every step with a file, ascending
  QList<qint64> codebookChanged;  // files new or changed since the previous batch
  // Set when checkpoints/ changed (or on a restart): the steps of its complete checkpoints.
  std::optional<std::vector<std::int64_t>> checkpointSteps;
  QDateTime lastWrite;
};

class RunFollower::BatchQueue {
 public:
  void push(Batch batch) {
    const QMutexLocker lock(&m_mutex);
    m_batches.push_back(std::move(batch));
  }
  std::vector<Batch> takeAll() {
    const QMutexLocker lock(&m_mutex);
    std::vector<Batch> batches;
    batches.swap(m_batches);
    return batches;
  }

 private:
  QMutex m_mutex;
  std::vector<Batch> m_batches;
};

/// Reads one run directory; used by one thread at a time (the follower's reading thread).
class RunFollower::Reader {
 public:
  Reader(const QString& path, quint64 generation)
      : m_run(runDirectoryAt(path)), m_generation(generation) {
    restart();
  }

  Batch read() {
    Batch batch;
    batch.generation = m_generation;
    // Before the events: a trainer that let go of the lock has written its last event, so a
    // batch without a done event and without the lock is a run that ended without a word. Only
    // once the run wrote something: a trainer takes the lock before it writes, and a probe
    // (which holds the lock for an instant) must not meet a trainer that is starting.
    if (m_active) {
      batch.trainerHoldsLock = RunSummaryReader::isLocked(pathText(m_run.root()));
    }
    std::vector<core::MetricsRow> rows = m_metrics->poll();
    core::FileTail::Result events = m_events->poll();
    if (m_metrics->resets() != 0 || events.restarted) {
      // One file started over: read both again from their beginnings, so that listeners never
      // hold rows of a file that no longer says so, and announce the codebook files again.
      countMalformed(batch);
      restart();
      m_codebook.clear();
      m_checkpointsStamp = kUnread;
      batch.restarted = true;
      rows = m_metrics->poll();
      events = m_events->poll();
    }
    countMalformed(batch);
    m_active = m_active || !rows.empty() || !events.lines.empty();
    batch.malformedEventLines += events.oversized;
    batch.rows = std::move(rows);
    batch.events.reserve(static_cast<int>(events.lines.size()));
    for (const std::string& line : events.lines) {
      core::DecodeResult result = core::decodeEventLine(line);
      if (core::Event* event = std::get_if<core::Event>(&result.value)) {
        // The metric events in an older trainer's events.jsonl repeat its metrics.jsonl, which
        // rowsAppended() delivers: one path per fact, so they go no further.
        if (!std::holds_alternative<core::MetricEvent>(*event)) {
          batch.events.append(std::move(*event));
        }
      } else {
        ++batch.malformedEventLines;
      }
    }
    readSettings(batch);
    readReference(batch);
    readCodebook(batch);
    // The checkpoint folders tell the run's step only to a run without events (RunStep), but
    // listing them is cheap: only when the folder's time changes (a checkpoint renamed into
    // place, or removed by the retention rules).
    if (changedSince(m_checkpointsStamp, m_run.checkpointsDir(), false)) {
      batch.checkpointSteps = m_run.listCheckpointSteps();
    }
    for (const std::filesystem::path& file : {m_run.metricsFile(), m_run.eventsFile()}) {
      const QFileInfo info(pathText(file));
      if (info.exists() && (!batch.lastWrite.isValid() || info.lastModified() > batch.lastWrite)) {
        batch.lastWrite = info.lastModified();
      }
    }
    return batch;
  }

 private:
  struct FileStamp {
    qint64 size = -1;
    qint64 modified = 0;  // ms since the epoch
    bool operator==(const FileStamp& o) const { return size == o.size && modified == o.modified; }
  };
  // A stamp no file has (not even a missing one): the next look reads whatever is there.
  static constexpr FileStamp kUnread{-2, 0};

  void restart() {
    m_metrics = std::make_unique<core::MetricsFollower>(m_run.metricsFile());
    m_events = std::make_unique<core::FileTail>(m_run.eventsFile());
    m_malformedReported = 0;
  }

  void countMalformed(Batch& batch) {
    batch.malformedMetricLines += m_metrics->malformedLines() - m_malformedReported;
    m_malformedReported = m_metrics->malformedLines();
  }

  // config.json's text when it changed and reads as a JSON object; the follower's
  // ConfigDocument parses it in the follower's thread.
  void readSettings(Batch& batch) {
    // Only a regular file: a FIFO or a device would block or never end.
    if (!changedSince(m_configStamp, m_run.configFile(), true) || m_configStamp.size < 0) {
      return;
    }
    std::ifstream in(m_run.configFile(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      m_configStamp = {};  // unreadable now: try again next time
      return;
    }
    nlohmann::ordered_json document;
    if (core::readConfigDocument(text, document) || !document.is_object()) {
      m_configStamp = {};  // maybe caught mid-write by an older writer: read it again next time
      return;
    }
    if (text != m_configText) {
      m_configText = text;
      batch.configText = QString::fromStdString(text);
    }
  }

  // The classic VQ reference is written once, before the first step; read again only when the
  // file's size or time changes.
  void readReference(Batch& batch) {
    if (changedSince(m_referenceStamp, m_run.referenceInfoFile(), false)) {
      batch.reference = m_referenceStamp.size < 0
                            ? std::nullopt
                            : core::readReferenceCodecInfo(m_run.referenceInfoFile());
    }
  }

  // Whether `file`'s size or time differ from `kept`, which takes the new ones (size -1: there
  // is no file, or with `regularOnly` none that is a regular file).
  static bool changedSince(FileStamp& kept, const std::filesystem::path& file, bool regularOnly) {
    const QFileInfo info(pathText(file));
    FileStamp stamp;
    if (regularOnly ? info.isFile() : info.exists()) {
      stamp.size = info.size();
      stamp.modified = info.lastModified().toMSecsSinceEpoch();
    }
    if (stamp == kept) {
      return false;
    }
    kept = stamp;
    return true;
  }

  void readCodebook(Batch& batch) {
    static const QRegularExpression kName(QStringLiteral("^step_(\\d+)\\.safetensors$"));
    const QDir dir(pathText(m_run.codebookDir()));
    QHash<qint64, FileStamp> seen;
    for (const QFileInfo& info :
         dir.entryInfoList({QStringLiteral("step_*.safetensors")}, QDir::Files, QDir::NoSort)) {
      const QRegularExpressionMatch match = kName.match(info.fileName());
      bool ok = false;
      const qint64 step = match.hasMatch() ? match.captured(1).toLongLong(&ok) : -1;
      if (!ok) {
        continue;
      }
      const FileStamp stamp{info.size(), info.lastModified().toMSecsSinceEpoch()};
      seen.insert(step, stamp);
      if (!(m_codebook.value(step) == stamp)) {
        batch.codebookChanged.append(step);
      }
    }
    m_codebook = seen;
    batch.codebookSteps = seen.keys();
    std::sort(batch.codebookSteps.begin(), batch.codebookSteps.end());
    std::sort(batch.codebookChanged.begin(), batch.codebookChanged.end());
  }

  core::RunDirectory m_run;
  quint64 m_generation;
  std::unique_ptr<core::MetricsFollower> m_metrics;
  std::unique_ptr<core::FileTail> m_events;
  std::size_t m_malformedReported = 0;
  bool m_active = false;  // rows or events were read: a trainer has held the lock
  FileStamp m_configStamp;
  FileStamp m_referenceStamp;
  FileStamp m_checkpointsStamp = kUnread;
  std::string m_configText;
  QHash<qint64, FileStamp> m_codebook;
};

RunFollower::RunFollower(QObject* parent)
    : QObject(parent),
      m_queue(std::make_shared<BatchQueue>()),
      m_reading(std::make_shared<std::atomic<bool>>(false)),
      m_reads(new FileReadThread(QStringLiteral("RunFollower"), this)),
      m_config(new ConfigDocument(this)) {
  qRegisterMetaType<core::MetricsRow>();
  qRegisterMetaType<QVector<core::MetricsRow>>();
  qRegisterMetaType<core::Event>();
  qRegisterMetaType<QVector<core::Event>>();
  qRegisterMetaType<QVector<qint64>>();
  m_timer.setInterval(kDefaultPollIntervalMs);
  connect(&m_timer, &QTimer::timeout, this, [this] { requestRead(true); });
}

RunFollower::~RunFollower() { m_timer.stop(); }

void RunFollower::setRunDirectory(const QString& path) {
  m_path = path;
  ++m_generation;  // reads of the previous directory, still queued or under way, are dropped
  m_reader = path.isEmpty() ? nullptr : std::make_shared<Reader>(path, m_generation);
  clearState();
  m_settings.reset();
  m_configText.clear();
  m_config->clear();
  m_trainerHoldsLock.reset();
  m_reference.reset();
  m_codebookSteps.clear();
  m_lastWrite = {};
  Q_EMIT reset();
  poll();
}

QString RunFollower::runDirectory() const { return m_path; }

void RunFollower::start() {
  m_timer.start();
  poll();
}

void RunFollower::stop() { m_timer.stop(); }

bool RunFollower::isActive() const { return m_timer.isActive(); }

void RunFollower::setPollInterval(int milliseconds) { m_timer.setInterval(qMax(1, milliseconds)); }

int RunFollower::pollInterval() const { return m_timer.interval(); }

QList<qint64> RunFollower::codebookSteps() const { return m_codebookSteps; }

QString RunFollower::codebookFile(qint64 step) const {
  if (!m_codebookSteps.contains(step) || m_path.isEmpty()) {
    return {};
  }
  return pathText(runDirectoryAt(m_path).codebookFile(step));
}

void RunFollower::poll() { requestRead(false); }

void RunFollower::requestRead(bool fromTimer) {
  if (!m_reader) {
    return;
  }
  if (fromTimer && m_reading->exchange(true)) {
    return;  // the last timer read has not finished (a slow file system): do not pile up more
  }
  std::shared_ptr<Reader> reader = m_reader;
  std::shared_ptr<BatchQueue> queue = m_queue;
  std::shared_ptr<std::atomic<bool>> reading = m_reading;
  m_reads->post(
      [reader, queue, reading, fromTimer] {
        queue->push(reader->read());
        if (fromTimer) {
          reading->store(false);
        }
      },
      [this] { deliver(); });
}

void RunFollower::requestCodebookCounts(qint64 step) {
  const QString file = codebookFile(step);
  if (file.isEmpty()) {
    return;
  }
  struct Counts {
    std::optional<QVector<qint64>> values;
    QString error;
  };
  const quint64 generation = m_generation;
  m_reads->read(
      [file] {
        Counts counts;
        counts.values = readCodebookCounts(file, &counts.error);
        return counts;
      },
      [this, step, generation](const Counts& counts) {
        if (m_generation == generation) {
          Q_EMIT codebookCountsRead(step, counts.values.value_or(QVector<qint64>()), counts.error);
        }
      });
}

int RunFollower::pendingReads() const { return m_reads->pendingReads(); }

bool RunFollower::waitForReads(int timeoutMs) { return m_reads->waitForReads(timeoutMs); }

void RunFollower::deliver() {
  for (Batch& batch : m_queue->takeAll()) {
    if (batch.generation == m_generation) {
      apply(batch);
    }
  }
}

void RunFollower::apply(Batch& batch) {
  m_malformedMetricLines += batch.malformedMetricLines;
  m_malformedEventLines += batch.malformedEventLines;
  if (batch.restarted) {
    ++m_restarts;
    clearState();
    m_codebookSteps.clear();
    Q_EMIT reset();
  }
  if (batch.lastWrite.isValid()) {
    m_lastWrite = batch.lastWrite;
  }
  if (batch.trainerHoldsLock) {
    m_trainerHoldsLock = batch.trainerHoldsLock;
  }
  if (batch.configText && m_config->loadText(batch.configText->toStdString(),
                                             pathText(runDirectoryAt(m_path).configFile()))) {
    m_configText = *batch.configText;
    m_settings = settingsOf(m_config->config());
    Q_EMIT settingsChanged();
  }
  if (batch.reference) {
    m_reference = *batch.reference;
    Q_EMIT referenceCodecChanged();
  }
  // What the events say (done, progress, error) is known before anyone hears of the rows, so
  // that a listener looking at done() from rowsAppended() sees the batch's end, not its middle.
  for (const core::Event& event : qAsConst(batch.events)) {
    noteEvent(event);
  }
  if (batch.checkpointSteps) {
    m_step.setCheckpointSteps(*batch.checkpointSteps);
  }
  if (!batch.rows.empty()) {
    m_rowCount += static_cast<qint64>(batch.rows.size());
    m_lastRowStep = batch.rows.back().step;
    m_step.noteRow(*m_lastRowStep);
    Q_EMIT rowsAppended(QVector<core::MetricsRow>(std::make_move_iterator(batch.rows.begin()),
                                                  std::make_move_iterator(batch.rows.end())));
  }
  if (!batch.events.isEmpty()) {
    Q_EMIT eventsAppended(batch.events);
  }
  m_codebookSteps = batch.codebookSteps;
  for (qint64 step : qAsConst(batch.codebookChanged)) {
    Q_EMIT codebookCountsChanged(step);
  }
}

void RunFollower::clearState() {
  m_rowCount = 0;
  m_lastRowStep.reset();
  m_step.clear();  // the batch that follows lists the checkpoints again
  m_lastProgress.reset();
  m_hello.reset();
  m_done.reset();
  m_error.reset();
}

void RunFollower::noteEvent(const core::Event& event) {
  m_step.noteEvent(event);
  if (const auto* progress = std::get_if<core::ProgressEvent>(&event)) {
    m_lastProgress = *progress;
  } else if (const auto* hello = std::get_if<core::HelloEvent>(&event)) {
    m_hello = *hello;
    m_done.reset();  // a resumed run appends a new session to the same file
    m_error.reset();
  } else if (const auto* done = std::get_if<core::DoneEvent>(&event)) {
    m_done = *done;
  } else if (const auto* error = std::get_if<core::ErrorEvent>(&event)) {
    if (!m_error) {
      m_error = *error;
    }
  }
}

RunSettings RunFollower::settingsOf(const core::RunConfig& config) {
  RunSettings settings;
  settings.maxSteps = config.train.max_steps;
  settings.discrStartStep = config.loss.discr_start_step;
  settings.ganEnabled = config.loss.adversarial_weight > 0.0;
  settings.codebookSize = config.model.quantizer.codebook_size;
  return settings;
}

std::optional<QVector<qint64>> RunFollower::readCodebookCounts(const QString& file,
                                                               QString* error) {
  auto fail = [error](const QString& why) -> std::optional<QVector<qint64>> {
    if (error != nullptr) {
      *error = why;
    }
    return std::nullopt;
  };
  try {
    const core::SafetensorsFile counts = core::SafetensorsFile::read(fileSystemPath(file));
    const core::TensorInfo* tensor = counts.find("counts");
    if (tensor == nullptr) {
      return fail(tr("%1: no tensor \"counts\"").arg(file));
    }
    if (tensor->shape.size() != 1) {
      return fail(
          tr("%1: \"counts\" has %2 dimensions, expected 1").arg(file).arg(tensor->shape.size()));
    }
    const std::string_view bytes = counts.data(*tensor);
    const auto n = static_cast<int>(tensor->shape[0]);
    QVector<qint64> values(n);
    auto copyAs = [&](auto sample) {
      using T = decltype(sample);
      for (int i = 0; i < n; ++i) {
        T value;
        std::memcpy(&value, bytes.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
        values[i] = static_cast<qint64>(value);
      }
    };
    switch (tensor->dtype) {
      case core::DType::I64:
        copyAs(std::int64_t{});
        break;
      case core::DType::U64:
        copyAs(std::uint64_t{});
        break;
      case core::DType::I32:
        copyAs(std::int32_t{});
        break;
      case core::DType::U32:
        copyAs(std::uint32_t{});
        break;
      default:
        return fail(tr("%1: \"counts\" is %2, expected an integer type")
                        .arg(file, QString::fromLatin1(
                                       core::dtypeName(tensor->dtype).data(),
                                       static_cast<int>(core::dtypeName(tensor->dtype).size()))));
    }
    return values;
  } catch (const core::SafetensorsError& e) {
    return fail(QString::fromUtf8(e.what()));
  }
}

}  // namespace tb::app
