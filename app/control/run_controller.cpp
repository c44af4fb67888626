#include "app/control/run_controller.h"

#include "app/text/run_status_text.h"
#include "core/run_directory.h"

#include <QDir>
#include <QFileInfo>

#include <csignal>
#include <filesystem>
#include <type_traits>
#include <utility>

#include <unistd.h>

namespace tb::app {
namespace {

QString fromUtf8(const std::string& text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

// Signals that end a process from outside (a person, a scheduler, the OOM killer, our own stop
// sequence); every other signal is the process's own fault.
bool isKillSignal(int signal) {
  return signal == SIGKILL || signal == SIGTERM || signal == SIGINT || signal == SIGHUP;
}

}  // namespace

RunController::RunController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<tb::app::RunController::State>();
  qRegisterMetaType<tb::core::HelloEvent>();
  qRegisterMetaType<tb::core::ProgressEvent>();
  qRegisterMetaType<tb::core::PhaseEvent>();
  qRegisterMetaType<tb::core::SampleEvent>();
  qRegisterMetaType<tb::core::CheckpointEvent>();
  qRegisterMetaType<tb::core::WarningEvent>();
  qRegisterMetaType<tb::core::ErrorEvent>();

  m_process = new QProcess(this);
  // The trainer gets a process group of its own: a Ctrl-C in the terminal reaches tokenbench,
  // which stops the run through the stop sequence, rather than every process at once.
  m_process->setChildProcessModifier([] { ::setpgid(0, 0); });
  connect(m_process, &QProcess::readyReadStandardOutput, this, &RunController::readStdout);
  connect(m_process, &QProcess::readyReadStandardError, this, &RunController::readStderr);
  connect(m_process, &QProcess::errorOccurred, this, &RunController::onProcessError);
  connect(m_process, &QProcess::finished, this, &RunController::onProcessFinished);

  m_stopTimer.setSingleShot(true);
  m_stopTimer.setTimerType(Qt::PreciseTimer);  // the grace periods are promises
  connect(&m_stopTimer, &QTimer::timeout, this, &RunController::onStopTimer);
  m_watchdog.setSingleShot(true);
  connect(&m_watchdog, &QTimer::timeout, this, &RunController::onWatchdog);
}

RunController::~RunController() {
  if (m_process->state() == QProcess::NotRunning) {
    return;
  }
  // Nobody may hear about this run any more; end it within the grace periods.
  blockSignals(true);
  m_process->blockSignals(true);
  writeControlLine(core::ControlMessage::Stop);
  m_process->closeWriteChannel();
  if (!m_process->waitForFinished(m_stopGraceMs)) {
    m_process->terminate();
    if (!m_process->waitForFinished(m_termGraceMs)) {
      m_process->kill();
      m_process->waitForFinished(-1);
    }
  }
}

bool RunController::start(const LaunchRequest& request) {
  if (isActive()) {
    return false;
  }
  m_request = request;
  // Stop and checkpoint requests reach the trainer as control lines on its stdin.
  m_request.command.control_stdin = true;
  if (!m_request.runDir().isEmpty()) {
    m_request.setRunDir(QDir::cleanPath(QFileInfo(m_request.runDir()).absoluteFilePath()));
  }
  m_stdoutSplitter = core::EventLineSplitter();
  m_stderrSplitter = core::EventLineSplitter(kMaxStderrLineBytes);
  m_stderrTail.clear();
  m_hello.reset();
  m_lastProgress.reset();
  m_phase.reset();
  m_lastError.reset();
  m_done.reset();
  m_step.clear();
  m_exitCode = 0;
  m_exitSignal = 0;
  m_startError.clear();
  m_eventCount = 0;
  m_garbageLines = 0;
  m_rejectedPaths = 0;
  m_lastProblem.clear();
  m_stopStage = 0;
  m_stopTimer.stop();
  m_finishedEmitted = false;

  setState(State::Starting);
  noteOutput();
  m_process->start(m_request.trainer, trainerArguments(m_request));
  return true;
}

void RunController::stop() {
  if (!isActive()) {
    return;
  }
  switch (m_stopStage) {
    case 0:
      m_stopStage = 1;
      // The stop line, and the end of stdin that means the same to the trainer.
      writeControlLine(core::ControlMessage::Stop);
      m_process->closeWriteChannel();
      m_stopTimer.start(m_stopGraceMs);
      break;
    case 1:
      m_stopStage = 2;
      m_process->terminate();
      m_stopTimer.start(m_termGraceMs);
      break;
    case 2:
      m_stopStage = 3;
      m_stopTimer.stop();
      m_process->kill();
      break;
    default:
      return;
  }
  m_watchdog.stop();
  setState(State::Stopping);
}

bool RunController::requestCheckpoint() {
  if (!isActive() || m_stopStage > 0) {
    return false;
  }
  return writeControlLine(core::ControlMessage::Checkpoint);
}

bool RunController::writeControlLine(core::ControlMessage message) {
  const QByteArray line = QByteArray::fromStdString(core::encodeControlMessage(message)) + '\n';
  return m_process->write(line) == line.size();
}

void RunController::setWatchdogTimeoutMs(int ms) {
  m_watchdogMs = ms;
  if (ms <= 0) {
    m_watchdog.stop();
  } else if (m_state == State::Starting || m_state == State::Running) {
    m_watchdog.start(ms);
  }
}

bool RunController::isActive() const {
  return m_state == State::Starting || m_state == State::Running || m_state == State::Stopping ||
         m_state == State::Unresponsive;
}

bool RunController::isSuccess(State state) {
  return state == State::Completed || state == State::Stopped;
}

bool RunController::isFailure(State state) {
  switch (state) {
    case State::FailedToStart:
    case State::Crashed:
    case State::Killed:
    case State::ExitedWithError:
    case State::ExitedWithoutDone:
      return true;
    default:
      return false;
  }
}

RunStatus RunController::status() const {
  RunStatus status;
  status.state = m_state;
  status.trainer = m_request.trainer;
  status.lastStep = lastStep();
  status.progress = m_lastProgress;
  status.error = m_lastError;
  status.done = m_done;
  status.stopStage = m_stopStage;
  status.stopGraceMs = m_stopGraceMs;
  status.exitCode = m_exitCode;
  status.exitSignal = m_exitSignal;
  status.startError = m_startError;
  for (auto it = m_stderrTail.rbegin(); it != m_stderrTail.rend(); ++it) {
    if (!it->trimmed().isEmpty()) {
      status.lastStderrLine = it->trimmed();
      break;
    }
  }
  status.silentForS = static_cast<double>(m_sinceOutput.elapsed()) / 1000.0;
  return status;
}

qint64 RunController::processId() const {
  return m_process->state() == QProcess::NotRunning ? 0 : m_process->processId();
}

QStringList RunController::stderrTail() const {
  QStringList lines;
  lines.reserve(static_cast<qsizetype>(m_stderrTail.size()));
  for (const QString& line : m_stderrTail) {
    lines.append(line);
  }
  return lines;
}

void RunController::setState(State state) {
  if (m_state == state) {
    return;
  }
  m_state = state;
  Q_EMIT stateChanged(state);
}

void RunController::noteOutput() {
  m_sinceOutput.start();
  if (m_state == State::Unresponsive) {
    setState(m_stateBeforeSilence);
  }
  if (m_watchdogMs > 0 && (m_state == State::Starting || m_state == State::Running)) {
    m_watchdog.start(m_watchdogMs);
  }
}

void RunController::onWatchdog() {
  if (m_state == State::Starting || m_state == State::Running) {
    m_stateBeforeSilence = m_state;
    setState(State::Unresponsive);
  }
}

void RunController::readStdout() {
  // A bounded slice per call, the rest on the next turn of the event loop: a trainer that
  // floods stdout delays timers and repaints by one slice at most, never by the whole backlog.
  m_process->setReadChannel(QProcess::StandardOutput);
  const QByteArray bytes = m_process->read(kReadSliceBytes);
  if (bytes.isEmpty()) {
    return;
  }
  noteOutput();
  for (const core::EventLineSplitter::Line& line :
       m_stdoutSplitter.feed(std::string_view(bytes.constData(), bytes.size()))) {
    handleLine(line);
  }
  if (m_process->bytesAvailable() > 0 && !m_readScheduled) {
    m_readScheduled = true;
    // A zero timer, not a posted event: timers (the window's included) take their turns
    // between slices instead of waiting behind a chain of posted calls.
    QTimer::singleShot(0, this, [this] {
      m_readScheduled = false;
      readStdout();
    });
  }
}

void RunController::readStderr() {
  const QByteArray bytes = m_process->readAllStandardError();
  if (bytes.isEmpty()) {
    return;
  }
  noteOutput();
  for (const core::EventLineSplitter::Line& line :
       m_stderrSplitter.feed(std::string_view(bytes.constData(), bytes.size()))) {
    keepStderrLine(line.oversized ? droppedStderrLineText(kMaxStderrLineBytes)
                                  : fromUtf8(line.text));
  }
}

void RunController::keepStderrLine(const QString& text) {
  QString line = text;
  if (line.endsWith(QLatin1Char('\r'))) {
    line.chop(1);
  }
  m_stderrTail.push_back(line);
  while (m_stderrTail.size() > static_cast<std::size_t>(kStderrTailLines)) {
    m_stderrTail.pop_front();
  }
  Q_EMIT stderrLine(line);
}

void RunController::handleLine(const core::EventLineSplitter::Line& line) {
  if (!line.oversized && (line.text.empty() || line.text == "\r")) {
    return;  // blank lines carry nothing and hurt nobody
  }
  core::DecodeResult decoded = core::decodeEventLine(line);
  if (core::Event* event = std::get_if<core::Event>(&decoded.value)) {
    handleEvent(std::move(*event));
    return;
  }
  ++m_garbageLines;
  reportProblem(ignoredLineText(decoded.error()->message));
}

void RunController::reportProblem(const QString& message) {
  m_lastProblem = message;
  Q_EMIT protocolWarning(message);
}

bool RunController::acceptPath(const std::string& path, const char* what, QString* absolute) {
  namespace fs = std::filesystem;
  const fs::path root(m_request.command.run_dir);
  if (m_request.command.run_dir.empty() || !core::RunDirectory(root).contains(path)) {
    ++m_rejectedPaths;
    reportProblem(ignoredPathText(what, path));
    return false;
  }
  const fs::path p(path);
  *absolute = QString::fromStdString((p.is_absolute() ? p : root / p).lexically_normal().string());
  return true;
}

void RunController::handleEvent(core::Event&& event) {
  QString absolute;
  if (const auto* sample = std::get_if<core::SampleEvent>(&event)) {
    if (!acceptPath(sample->path, "sample", &absolute)) return;
  } else if (const auto* checkpoint = std::get_if<core::CheckpointEvent>(&event)) {
    if (!acceptPath(checkpoint->path, "checkpoint", &absolute)) return;
  }
  ++m_eventCount;
  if (m_state == State::Starting) {
    setState(State::Running);
  }

  m_step.noteEvent(event);
  std::visit(
      [this](auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, core::HelloEvent>) {
          m_hello = e;
        } else if constexpr (std::is_same_v<T, core::ProgressEvent>) {
          m_lastProgress = e;
          m_phase.reset();
        } else if constexpr (std::is_same_v<T, core::PhaseEvent>) {
          if (!m_lastProgress) m_phase = e;
        } else if constexpr (std::is_same_v<T, core::ErrorEvent>) {
          m_lastError = e;
        } else if constexpr (std::is_same_v<T, core::DoneEvent>) {
          m_done = e;
        }
      },
      event);

  std::visit(
      [this, &absolute](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, core::HelloEvent>) {
          Q_EMIT helloReceived(e);
        } else if constexpr (std::is_same_v<T, core::ProgressEvent>) {
          Q_EMIT progressReceived(e);
        } else if constexpr (std::is_same_v<T, core::PhaseEvent>) {
          if (!m_lastProgress) Q_EMIT phaseReceived(e);
        } else if constexpr (std::is_same_v<T, core::SampleEvent>) {
          Q_EMIT sampleReceived(e, absolute);
        } else if constexpr (std::is_same_v<T, core::CheckpointEvent>) {
          Q_EMIT checkpointReceived(e, absolute);
        } else if constexpr (std::is_same_v<T, core::WarningEvent>) {
          Q_EMIT warningReceived(e);
        } else if constexpr (std::is_same_v<T, core::ErrorEvent>) {
          Q_EMIT errorReceived(e);
        }
        // Log events are counted only (no trainer writes them yet); so are the metric events of
        // an older trainer: their rows are in metrics.jsonl, where curves and the headless
        // runner's loss come from; like any output they kept the watchdog quiet. The done event
        // ends the run through finished(), once the process is gone.
      },
      event);
}

void RunController::onStopTimer() {
  if (m_stopStage == 1 || m_stopStage == 2) {
    stop();
  }
}

void RunController::onProcessError(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart || m_finishedEmitted) {
    return;  // crashes arrive through finished(); write errors end in finished() too
  }
  m_startError = m_process->errorString();
  finish(State::FailedToStart);
}

void RunController::drainOutput() {
  m_process->setReadChannel(QProcess::StandardOutput);
  while (m_process->bytesAvailable() > 0) {
    readStdout();
  }
  readStderr();
  if (std::optional<core::EventLineSplitter::Line> last = m_stdoutSplitter.flush()) {
    handleLine(*last);
  }
  if (std::optional<core::EventLineSplitter::Line> last = m_stderrSplitter.flush()) {
    keepStderrLine(fromUtf8(last->text));
  }
}

void RunController::onProcessFinished(int exitCode, QProcess::ExitStatus status) {
  if (m_finishedEmitted) {
    return;
  }
  drainOutput();
  if (status == QProcess::CrashExit) {
    // QProcess reports the terminating signal as the exit code of a crash.
    m_exitSignal = exitCode;
    m_exitCode = exitCode;
    finish(isKillSignal(exitCode) ? State::Killed : State::Crashed);
    return;
  }
  m_exitCode = exitCode;
  if (exitCode != 0) {
    finish(State::ExitedWithError);
  } else if (!m_done) {
    finish(State::ExitedWithoutDone);
  } else if (m_done->status == "completed") {
    finish(State::Completed);
  } else if (m_done->status == "stopped") {
    finish(State::Stopped);
  } else {
    finish(State::ExitedWithError);  // done "failed" with exit 0: believe the worse news
  }
}

void RunController::finish(State state) {
  m_stopTimer.stop();
  m_watchdog.stop();
  m_finishedEmitted = true;
  setState(state);
  Q_EMIT finished(state);
}

}  // namespace tb::app
