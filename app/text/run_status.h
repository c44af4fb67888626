#pragma once
// RunStatus: where a trainer run is, as plain data. RunController (app/control) keeps it and
// hands out copies (RunController::status()); the words for people are made from it by
// app/text/run_status_text.h, in the window and in `tokenbench --no-gui` alike.

#include "core/event_protocol.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <cstdint>
#include <optional>

namespace tb::app {

/// A snapshot of one run of the trainer, for whoever has to say what happened.
struct RunStatus {
  Q_GADGET

 public:
  /// Where the run is (RunController::State). Terminal states (Completed ... ExitedWithoutDone)
  /// stay until the next start; Unresponsive returns to Running (or Stopping) as soon as the
  /// trainer speaks again.
  enum class State {
    Idle,               ///< nothing started yet
    Starting,           ///< process launched, no event yet
    Running,            ///< events arriving
    Stopping,           ///< stop requested, waiting for the process to end
    Completed,          ///< exit 0 after done "completed"
    Stopped,            ///< exit 0 after done "stopped"
    FailedToStart,      ///< the program could not be executed
    Crashed,            ///< ended by a fault signal (SIGSEGV, SIGABRT, ...)
    Killed,             ///< ended by SIGKILL/SIGTERM/SIGINT/SIGHUP (ours or someone else's)
    ExitedWithError,    ///< exit status != 0, or a done "failed"; see `error`
    ExitedWithoutDone,  ///< exit 0 without a done event
    Unresponsive,       ///< no output for the watchdog's timeout; the process is kept
  };
  Q_ENUM(State)

  State state = State::Idle;
  QString trainer;                              ///< the trainer program as started
  std::int64_t lastStep = -1;                   ///< the run's step (app/control RunStep); -1: none
  std::optional<core::ProgressEvent> progress;  ///< the last progress event
  std::optional<core::ErrorEvent> error;        ///< the last error event
  std::optional<core::DoneEvent> done;          ///< the done event
  /// How far the stop sequence went: 0 not asked, 1 stop line sent, 2 SIGTERM sent, 3 SIGKILL.
  int stopStage = 0;
  int stopGraceMs = 0;     ///< time between the stop line and SIGTERM
  int exitCode = 0;        ///< exit status, or the signal number for Crashed/Killed
  int exitSignal = 0;      ///< signal that ended the process; 0 for a normal exit
  QString startError;      ///< why the program could not be executed (FailedToStart)
  QString lastStderrLine;  ///< the last stderr line that is not blank, trimmed
  double silentForS = 0;   ///< seconds since the trainer's last output
};

}  // namespace tb::app
