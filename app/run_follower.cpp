#include "app/run_follower.h"

#include "core/run_config.h"
#include "core/run_directory.h"
#include "core/safetensors.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QRegularExpression>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace tb::app {
namespace {

// What the tail compares to tell "appended to" from "rewritten": the first bytes of the file.
constexpr std::size_t kHeadBytes = 256;
constexpr std::size_t kReadChunkBytes = 64 * 1024;

std::filesystem::path toPath(const QString& path) {
  return std::filesystem::path(QFile::encodeName(path).toStdString());
}

ssize_t readAt(int fd, char* buffer, std::size_t size, std::uint64_t offset) {
  ssize_t n = 0;
  do {
    n = ::pread(fd, buffer, size, static_cast<off_t>(offset));
  } while (n < 0 && errno == EINTR);
  return n;
}

bool isBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

}  // namespace

/// events.jsonl, tailed the way core::MetricsFollower tails metrics.jsonl.
class RunFollower::EventsTail {
 public:
  struct Result {
    std::vector<std::string> lines;
    bool restarted = false;  // the file started over; `lines` are from its beginning
    std::size_t oversized = 0;
  };

  explicit EventsTail(std::filesystem::path path) : m_path(std::move(path)) {}

  Result poll() {
    Result result;
    const int fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return result;  // absent (yet) or unreadable: nothing new this time
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
      const auto device = static_cast<std::uint64_t>(st.st_dev);
      const auto inode = static_cast<std::uint64_t>(st.st_ino);
      const auto size = static_cast<std::uint64_t>(st.st_size);
      bool restart = false;
      if (m_haveIdentity && (device != m_device || inode != m_inode)) {
        restart = true;  // replaced or rotated
      } else if (size < m_offset) {
        restart = true;  // truncated
      } else if (!m_head.empty()) {
        std::string head(m_head.size(), '\0');
        restart = readAt(fd, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size()) ||
                  head != m_head;  // rewritten in place
      }
      if (restart) {
        m_splitter = core::EventLineSplitter();
        m_offset = 0;
        m_head.clear();
        result.restarted = true;
      }
      m_haveIdentity = true;
      m_device = device;
      m_inode = inode;
      std::string chunk(kReadChunkBytes, '\0');
      for (;;) {
        const ssize_t n = readAt(fd, chunk.data(), chunk.size(), m_offset);
        if (n <= 0) {
          break;  // end of file, or an error to retry at the next poll
        }
        const std::string_view bytes(chunk.data(), static_cast<std::size_t>(n));
        if (m_head.size() < kHeadBytes) {
          m_head.append(bytes.substr(0, kHeadBytes - m_head.size()));
        }
        m_offset += static_cast<std::uint64_t>(n);
        for (core::EventLineSplitter::Line& line : m_splitter.feed(bytes)) {
          if (line.oversized) {
            ++result.oversized;
          } else if (!isBlank(line.text)) {
            result.lines.push_back(std::move(line.text));
          }
        }
      }
    }
    ::close(fd);
    return result;
  }

 private:
  std::filesystem::path m_path;
  core::EventLineSplitter m_splitter;
  std::uint64_t m_offset = 0;
  bool m_haveIdentity = false;
  std::uint64_t m_device = 0;
  std::uint64_t m_inode = 0;
  std::string m_head;
};

RunFollower::RunFollower(QObject* parent) : QObject(parent) {
  qRegisterMetaType<core::MetricsRow>();
  qRegisterMetaType<QVector<core::MetricsRow>>();
  qRegisterMetaType<core::Event>();
  qRegisterMetaType<QVector<core::Event>>();
  m_timer.setInterval(kDefaultPollIntervalMs);
  connect(&m_timer, &QTimer::timeout, this, &RunFollower::poll);
}

RunFollower::~RunFollower() = default;

void RunFollower::setRunDirectory(const QString& path) {
  m_path = path;
  restartReading();
  m_settings.reset();
  m_configStamp = {};
  m_codebookFiles.clear();
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

QList<qint64> RunFollower::codebookSteps() const {
  QList<qint64> steps = m_codebookFiles.keys();
  std::sort(steps.begin(), steps.end());
  return steps;
}

QString RunFollower::codebookFile(qint64 step) const {
  if (!m_codebookFiles.contains(step) || m_path.isEmpty()) {
    return {};
  }
  return QDir(m_path).filePath(QStringLiteral("codebook/step_%1.safetensors").arg(step));
}

std::size_t RunFollower::malformedMetricLines() const {
  return m_malformedMetricLinesBefore + (m_metrics ? m_metrics->malformedLines() : 0);
}

void RunFollower::restartReading() {
  m_malformedMetricLinesBefore = malformedMetricLines();
  m_metrics.reset();
  m_events.reset();
  if (!m_path.isEmpty()) {
    const core::RunDirectory run(toPath(m_path));
    m_metrics = std::make_unique<core::MetricsFollower>(run.metricsFile());
    m_events = std::make_unique<EventsTail>(run.eventsFile());
  }
  m_metricsResetsSeen = 0;
  m_rowCount = 0;
  m_lastStep.reset();
  m_lastProgress.reset();
  m_hello.reset();
  m_done.reset();
  m_error.reset();
}

void RunFollower::poll() {
  if (m_path.isEmpty() || !m_metrics) {
    return;
  }
  std::vector<core::MetricsRow> rows = m_metrics->poll();
  EventsTail::Result events = m_events->poll();
  if (m_metrics->resets() != m_metricsResetsSeen || events.restarted) {
    // One file started over: deliver both again from their beginnings, so that listeners never
    // hold rows of a file that no longer says so.
    ++m_restarts;
    restartReading();
    m_codebookFiles.clear();  // listeners drop their codebook state on reset(): announce again
    Q_EMIT reset();
    rows = m_metrics->poll();
    events = m_events->poll();
  }
  m_metricsResetsSeen = m_metrics->resets();
  m_malformedEventLines += events.oversized;

  pollSettings();
  for (const char* name : {"metrics.jsonl", "events.jsonl"}) {
    const QFileInfo info(QDir(m_path).filePath(QLatin1String(name)));
    if (info.exists() && (!m_lastWrite.isValid() || info.lastModified() > m_lastWrite)) {
      m_lastWrite = info.lastModified();
    }
  }
  if (!rows.empty()) {
    m_rowCount += static_cast<qint64>(rows.size());
    m_lastStep = rows.back().step;
    Q_EMIT rowsAppended(QVector<core::MetricsRow>(std::make_move_iterator(rows.begin()),
                                                  std::make_move_iterator(rows.end())));
  }
  if (!events.lines.empty()) {
    QVector<core::Event> decoded;
    decoded.reserve(static_cast<int>(events.lines.size()));
    for (const std::string& line : events.lines) {
      core::DecodeResult result = core::decodeEventLine(line);
      if (const core::Event* event = result.event()) {
        noteEvent(*event);
        decoded.append(*event);
      } else {
        ++m_malformedEventLines;
      }
    }
    if (!decoded.isEmpty()) {
      Q_EMIT eventsAppended(decoded);
    }
  }
  pollCodebook();
}

void RunFollower::noteEvent(const core::Event& event) {
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

void RunFollower::pollSettings() {
  const QFileInfo info(QDir(m_path).filePath(QStringLiteral("config.json")));
  FileStamp stamp;
  if (info.isFile()) {
    stamp.size = info.size();
    stamp.modified = info.lastModified().toMSecsSinceEpoch();
  }
  if (stamp == m_configStamp) {
    return;
  }
  m_configStamp = stamp;
  QFile file(info.filePath());
  if (stamp.size < 0 || !file.open(QIODevice::ReadOnly)) {
    return;
  }
  QJsonParseError parseError;
  const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &parseError);
  if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
    m_configStamp = {};  // maybe caught mid-write: read it again next time
    return;
  }
  const core::RunConfig defaults;
  const QJsonObject root = document.object();
  const QJsonObject loss = root.value(QStringLiteral("loss")).toObject();
  const QJsonObject train = root.value(QStringLiteral("train")).toObject();
  const QJsonObject quantizer =
      root.value(QStringLiteral("model")).toObject().value(QStringLiteral("quantizer")).toObject();
  RunSettings settings;
  settings.maxSteps = train.value(QStringLiteral("max_steps")).toInteger(defaults.train.max_steps);
  settings.discrStartStep =
      loss.value(QStringLiteral("discr_start_step")).toInteger(defaults.loss.discr_start_step);
  settings.ganEnabled =
      loss.value(QStringLiteral("adversarial_weight")).toDouble(defaults.loss.adversarial_weight) >
      0.0;
  settings.codebookSize = quantizer.value(QStringLiteral("codebook_size")).toInteger(0);
  if (!m_settings || *m_settings != settings) {
    m_settings = settings;
    Q_EMIT settingsChanged();
  }
}

void RunFollower::pollCodebook() {
  static const QRegularExpression kName(QStringLiteral("^step_(\\d+)\\.safetensors$"));
  const QDir dir(QDir(m_path).filePath(QStringLiteral("codebook")));
  QHash<qint64, FileStamp> seen;
  QList<qint64> changed;
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
    if (!(m_codebookFiles.value(step) == stamp)) {
      changed.append(step);
    }
  }
  m_codebookFiles = seen;
  std::sort(changed.begin(), changed.end());
  for (qint64 step : changed) {
    Q_EMIT codebookCountsChanged(step);
  }
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
    const core::SafetensorsFile counts = core::SafetensorsFile::read(toPath(file));
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
