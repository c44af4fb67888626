#pragma once
// RunController: starts one `tokenbench-trainer train` (a QProcess), reads its NDJSON events and
// its human log, and turns every way the process can end into one distinct state.

#include "app/control/launch_request.h"
#include "app/control/run_step.h"
#include "app/text/run_status.h"
#include "core/control_message.h"
#include "core/event_protocol.h"

#include <QElapsedTimer>
#include <QMetaType>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <cstdint>
#include <deque>
#include <optional>

namespace tb::app {

/// Drives one trainer process at a time. Lives on a thread with an event loop (the GUI thread, or
/// the QCoreApplication of `tokenbench --no-gui`).
///
/// Success is exit status 0 *and* a `done` event; everything else ends in a state that says what
/// happened (see State). Events are decoded with core::decodeEventLine; lines that are not events
/// ("garbage") and sample/checkpoint paths outside the run directory are ignored, counted and
/// reported with protocolWarning(), never fatal. The last kStderrTailLines lines of stderr are
/// kept for the error report. A watchdog marks a silent process Unresponsive and keeps it.
///
/// The stream is run control only (hello, progress, sample, checkpoint, warning, error, done);
/// metric rows are read from the run's metrics.jsonl. A `metric` event of an older trainer still
/// decodes and is counted in eventCount(), and otherwise ignored.
///
/// The controller keeps data, not words: status() is a snapshot that app/text/run_status_text.h
/// puts into sentences for the window and the headless runner alike.
class RunController : public QObject {
  Q_OBJECT

 public:
  /// Where the run is (declared with the plain data a front end reads, RunStatus). Terminal
  /// states (Completed ... ExitedWithoutDone) stay until the next start(); Unresponsive returns
  /// to Running (or Stopping) as soon as the trainer speaks again.
  using State = RunStatus::State;

  /// Stderr lines kept for the report.
  static constexpr int kStderrTailLines = 50;
  /// Longest stderr line kept, in bytes (the rest of the line is dropped).
  static constexpr std::size_t kMaxStderrLineBytes = 16 * 1024;
  /// Most stdout bytes decoded per turn of the event loop.
  static constexpr qint64 kReadSliceBytes = 8 * 1024;
  /// Default period between the stop line and SIGTERM, and between SIGTERM and SIGKILL.
  static constexpr int kDefaultStopGraceMs = 15000;
  static constexpr int kDefaultTermGraceMs = 10000;
  /// Default watchdog: this long without any output (events or stderr) means Unresponsive.
  static constexpr int kDefaultWatchdogMs = 300 * 1000;

  explicit RunController(QObject* parent = nullptr);
  /// Stops a trainer that is still running (stop line, then SIGTERM, then SIGKILL, waiting at
  /// most the grace periods) before returning.
  ~RunController() override;

  /// Starts the trainer of `request` (runDir is made absolute against the current directory;
  /// the trainer always reads control lines on stdin: --control-stdin).
  /// Returns false, and changes nothing, while a process is active. Otherwise the state becomes
  /// Starting and, if the program cannot run, FailedToStart (with finished()).
  bool start(const LaunchRequest& request);

  /// Asks the trainer to stop: writes `{"type":"stop"}` and closes its stdin; after
  /// stopGracePeriodMs() sends SIGTERM; after termGracePeriodMs() more, SIGKILL. Calling stop()
  /// again while Stopping skips to the next step at once. No-op when nothing runs.
  void stop();
  /// Writes `{"type":"checkpoint"}`; false when nothing runs or a stop was already requested.
  bool requestCheckpoint();

  void setStopGracePeriodMs(int ms) { m_stopGraceMs = ms; }
  void setTermGracePeriodMs(int ms) { m_termGraceMs = ms; }
  /// 0 disables the watchdog.
  void setWatchdogTimeoutMs(int ms);
  int stopGracePeriodMs() const { return m_stopGraceMs; }
  int termGracePeriodMs() const { return m_termGraceMs; }
  int watchdogTimeoutMs() const { return m_watchdogMs; }

  State state() const { return m_state; }
  /// True while a process exists (Starting, Running, Stopping, Unresponsive).
  bool isActive() const;
  /// True for the states a run ends in well (Completed, Stopped).
  static bool isSuccess(State state);
  /// True for the states a run ends in badly (FailedToStart ... ExitedWithoutDone).
  static bool isFailure(State state);
  /// Everything a front end needs to say where the run is, now (describeRun() says it).
  RunStatus status() const;

  /// The request as started (runDir absolute).
  const LaunchRequest& request() const { return m_request; }
  /// Absolute run directory of the current or last run; empty before the first start().
  QString runDirectory() const { return m_request.runDir(); }
  /// Pid of the trainer, 0 when none runs.
  qint64 processId() const;

  /// Last stderr lines, oldest first (at most kStderrTailLines).
  QStringList stderrTail() const;
  const std::optional<core::HelloEvent>& hello() const { return m_hello; }
  const std::optional<core::ProgressEvent>& lastProgress() const { return m_lastProgress; }
  /// What the trainer is doing before its first progress event; empty once one came.
  const std::optional<core::PhaseEvent>& phase() const { return m_phase; }
  const std::optional<core::ErrorEvent>& lastError() const { return m_lastError; }
  const std::optional<core::DoneEvent>& doneEvent() const { return m_done; }
  /// The run's step as its events say it (RunStep); -1 when none has.
  std::int64_t lastStep() const { return m_step.value().value_or(-1); }
  /// Exit status (normal exit) or signal number (Crashed/Killed) of the last process.
  int exitCode() const { return m_exitCode; }
  /// How far the stop sequence went: 0 not asked, 1 stop line sent, 2 SIGTERM sent, 3 SIGKILL.
  int stopStage() const { return m_stopStage; }
  /// Signal that ended the last process, 0 when it exited normally.
  int exitSignal() const { return m_exitSignal; }
  /// The QProcess error text for FailedToStart.
  QString startError() const { return m_startError; }

  /// Events decoded in the current run.
  std::uint64_t eventCount() const { return m_eventCount; }
  /// Stdout lines that were not events (malformed, wrong version, oversized...).
  std::uint64_t garbageLines() const { return m_garbageLines; }
  /// Sample/checkpoint events whose path lies outside the run directory.
  std::uint64_t rejectedPaths() const { return m_rejectedPaths; }
  /// The most recent protocol problem as a sentence; empty when none.
  QString lastProtocolProblem() const { return m_lastProblem; }

 Q_SIGNALS:
  void stateChanged(tb::app::RunController::State state);
  void helloReceived(const tb::core::HelloEvent& event);
  void progressReceived(const tb::core::ProgressEvent& event);
  /// A phase before the first progress event (indexing the data, fitting the reference, ...).
  void phaseReceived(const tb::core::PhaseEvent& event);
  /// A sample inside the run directory; `absolutePath` is resolved against it. The window takes
  /// it as a cue to look at samples/ now; what the Samples page shows comes from the files.
  void sampleReceived(const tb::core::SampleEvent& event, const QString& absolutePath);
  /// A checkpoint inside the run directory (`absolutePath` is resolved against it): the reply
  /// to requestCheckpoint(), and the ones the run writes on its own.
  void checkpointReceived(const tb::core::CheckpointEvent& event, const QString& absolutePath);
  void warningReceived(const tb::core::WarningEvent& event);
  void errorReceived(const tb::core::ErrorEvent& event);
  /// One stderr line of the trainer (without newline).
  void stderrLine(const QString& line);
  /// A line that is not an event, or a path outside the run directory (already counted).
  void protocolWarning(const QString& message);
  /// The process is gone and state() is final. Emitted once per start().
  void finished(tb::app::RunController::State state);

 private:
  void setState(State state);
  void readStdout();
  void readStderr();
  void handleLine(const core::EventLineSplitter::Line& line);
  void handleEvent(core::Event&& event);
  bool acceptPath(const std::string& path, const char* what, QString* absolute);
  void reportProblem(const QString& message);
  void keepStderrLine(const QString& line);
  void noteOutput();
  void onWatchdog();
  void onStopTimer();
  void onProcessError(QProcess::ProcessError error);
  void onProcessFinished(int exitCode, QProcess::ExitStatus status);
  void finish(State state);
  void drainOutput();
  bool writeControlLine(core::ControlMessage message);

  QProcess* m_process = nullptr;
  LaunchRequest m_request;
  State m_state = State::Idle;
  core::EventLineSplitter m_stdoutSplitter;
  core::EventLineSplitter m_stderrSplitter{kMaxStderrLineBytes};
  std::deque<QString> m_stderrTail;

  std::optional<core::HelloEvent> m_hello;
  std::optional<core::ProgressEvent> m_lastProgress;
  std::optional<core::PhaseEvent> m_phase;
  std::optional<core::ErrorEvent> m_lastError;
  std::optional<core::DoneEvent> m_done;
  RunStep m_step;  // the run's step, from its events
  int m_exitCode = 0;
  int m_exitSignal = 0;
  QString m_startError;
  std::uint64_t m_eventCount = 0;
  std::uint64_t m_garbageLines = 0;
  std::uint64_t m_rejectedPaths = 0;
  QString m_lastProblem;

  // Stop sequence: 0 none, 1 stop line sent, 2 SIGTERM sent, 3 SIGKILL sent.
  int m_stopStage = 0;
  QTimer m_stopTimer;
  int m_stopGraceMs = kDefaultStopGraceMs;
  int m_termGraceMs = kDefaultTermGraceMs;

  QTimer m_watchdog;
  int m_watchdogMs = kDefaultWatchdogMs;
  QElapsedTimer m_sinceOutput;
  bool m_finishedEmitted = true;
  bool m_readScheduled = false;  // a queued readStdout() will take the next slice
  State m_stateBeforeSilence = State::Running;
};

}  // namespace tb::app

// One signal per event type, so that no signal carries the tb::core::Event variant itself
// (app/run_follower.h declares that one).
Q_DECLARE_METATYPE(tb::core::HelloEvent)
Q_DECLARE_METATYPE(tb::core::ProgressEvent)
Q_DECLARE_METATYPE(tb::core::PhaseEvent)
Q_DECLARE_METATYPE(tb::core::SampleEvent)
Q_DECLARE_METATYPE(tb::core::CheckpointEvent)
Q_DECLARE_METATYPE(tb::core::WarningEvent)
Q_DECLARE_METATYPE(tb::core::ErrorEvent)
