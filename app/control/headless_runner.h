#pragma once

#include "app/control/compare_request.h"
#include "app/control/run_controller.h"
#include "core/event_protocol.h"

#include <QString>
#include <QStringList>

#include <iosfwd>
#include <optional>
#include <string>

namespace tb::app {

/// `tokenbench --no-gui`: trains (or resumes) one run without a window, for cluster nodes.
///
/// Starts the trainer through the same RunController as the window, on a QCoreApplication (no
/// display needed). On stderr: a progress line per progress event (at most one per
/// progressIntervalMs(), the last step always; its loss is that of the newest row of the run's
/// metrics.jsonl, read when the line is printed), the trainer's own log lines as they come,
/// warnings, errors with their hint, and a last line saying how the run ended. SIGINT and SIGTERM
/// stop the run gracefully (a second one sends SIGTERM to the trainer, a third SIGKILL). The
/// exit status is the trainer's (see exitStatus()). stdout stays empty.
class HeadlessRunner {
 public:
  /// What the run needs, from the command line.
  struct Inputs {
    std::string configPath;  ///< --config FILE; may be empty only with resume.
    std::string runDir;      ///< --run-dir DIR; required.
    bool resume = false;     ///< --resume: continue the run in runDir.
    std::string timeBudget;  ///< --time-budget T; empty for none.
  };

  /// Protocol problems printed one by one; after that they are only counted.
  static constexpr int kShownProtocolProblems = 10;

  explicit HeadlessRunner(Inputs inputs);

  /// Checks the inputs against each other and the file system. Returns "" when they are
  /// usable, else one line that names the offending option.
  std::string validate() const;

  /// Validates, then runs `trainer` to the end. Needs a QCoreApplication (not necessarily
  /// running). Messages go to `err`; `out` is reserved for machine-readable output. Returns the
  /// process exit status.
  int run(const QString& trainer, std::ostream& out, std::ostream& err);

  /// Grace periods and watchdog of the RunController (defaults: the controller's).
  void setStopGracePeriodMs(int ms) { m_stopGraceMs = ms; }
  void setTermGracePeriodMs(int ms) { m_termGraceMs = ms; }
  void setWatchdogTimeoutMs(int ms) { m_watchdogMs = ms; }
  /// Least time between two progress lines (default 1000 ms; 0 prints every one).
  void setProgressIntervalMs(int ms) { m_progressIntervalMs = ms; }

  const Inputs& inputs() const { return m_inputs; }

  /// `step 120/1000  loss 0.0712  3.4 it/s  ETA 4m18s`; the parts that are unknown (NaN rate or
  /// ETA, no loss yet) are left out.
  static std::string progressLine(const core::ProgressEvent& progress, std::optional<double> loss);
  /// The exit status for a run that ended in `state` with the trainer's `exitCode`: 0 for
  /// Completed and Stopped; the trainer's own status (1 failed, 2 usage/configuration) for
  /// ExitedWithError; 2 when the trainer could not be started; 1 for everything else.
  static int exitStatus(RunController::State state, int exitCode);

  /// `tokenbench --no-gui --compare`: runs `request.trainer compare ...` (compareArguments()),
  /// passes its stdout and stderr through, stops it on SIGINT/SIGTERM, and returns its exit
  /// status (2 when it cannot start, 1 when it crashed). Needs a QCoreApplication.
  static int runCompare(const CompareRequest& request, std::ostream& err);

 private:
  Inputs m_inputs;
  int m_stopGraceMs = RunController::kDefaultStopGraceMs;
  int m_termGraceMs = RunController::kDefaultTermGraceMs;
  int m_watchdogMs = RunController::kDefaultWatchdogMs;
  int m_progressIntervalMs = 1000;
};

}  // namespace tb::app
