#include "app/control/headless_runner.h"

#include "app/control/exit_code.h"
#include "app/control/launch_request.h"
#include "app/control/stop_signal_notifier.h"
#include "app/control/wire_text.h"
#include "app/text/duration_text.h"
#include "app/text/run_status_text.h"
#include "core/metric_names.h"
#include "core/metrics_log.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QProcess>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string_view>
#include <system_error>
#include <utility>

#include <unistd.h>

namespace tb::app {
namespace {

// Metric names that stand for "the loss" on a progress line, best first.
constexpr std::string_view kLossNames[] = {core::metric::kTrainLoss, core::metric::kTrainReconLoss};

void say(std::ostream& err, const std::string& line) { err << line << '\n' << std::flush; }

void say(std::ostream& err, const char* line) { say(err, std::string(line)); }

void say(std::ostream& err, const QString& line) { say(err, line.toStdString()); }

const char* signalWord(int signal) { return signal == SIGTERM ? "SIGTERM" : "SIGINT"; }

// The loss a metrics row holds, if any (the first of kLossNames it has).
std::optional<double> lossOf(const core::MetricsRow& row) {
  for (const std::string_view name : kLossNames) {
    for (const auto& [key, value] : row.values) {
      if (key == name) return value;
    }
  }
  return std::nullopt;
}

}  // namespace

HeadlessRunner::HeadlessRunner(Inputs inputs) : m_inputs(std::move(inputs)) {}

std::string HeadlessRunner::validate() const {
  namespace fs = std::filesystem;
  if (m_inputs.runDir.empty()) {
    return "--no-gui needs --run-dir DIR (where the run writes its files)";
  }
  if (m_inputs.configPath.empty() && !m_inputs.resume) {
    return "--no-gui needs --config FILE (or --resume to continue the run in --run-dir)";
  }
  std::error_code ec;
  if (!m_inputs.configPath.empty() && !fs::is_regular_file(m_inputs.configPath, ec)) {
    return "--config: no such file: " + m_inputs.configPath;
  }
  if (m_inputs.resume && !fs::is_directory(m_inputs.runDir, ec)) {
    return "--run-dir: no such directory to resume: " + m_inputs.runDir;
  }
  if (!m_inputs.resume && fs::exists(m_inputs.runDir, ec) &&
      !fs::is_directory(m_inputs.runDir, ec)) {
    return "--run-dir: exists and is not a directory: " + m_inputs.runDir;
  }
  return {};
}

std::string HeadlessRunner::progressLine(const core::ProgressEvent& progress,
                                         std::optional<double> loss) {
  char buffer[160];
  std::string line = "step " + std::to_string(progress.step) + "/" + std::to_string(progress.total);
  if (loss && std::isfinite(*loss)) {
    std::snprintf(buffer, sizeof buffer, "  loss %.4g", *loss);
    line += buffer;
  } else if (loss) {
    line += "  loss nan";
  }
  if (std::isfinite(progress.it_per_s) && progress.it_per_s >= 0) {
    std::snprintf(buffer, sizeof buffer, progress.it_per_s >= 1 ? "  %.1f it/s" : "  %.2f it/s",
                  progress.it_per_s);
    line += buffer;
  }
  if (std::isfinite(progress.eta_s) && progress.eta_s >= 0) {
    line += "  ETA " + formatDuration(progress.eta_s).toStdString();
  }
  return line;
}

int HeadlessRunner::exitStatus(RunController::State state, int exitCode) {
  using State = RunController::State;
  switch (state) {
    case State::Completed:
    case State::Stopped:
      return toInt(ExitCode::Ok);
    case State::FailedToStart:
      return toInt(ExitCode::Usage);
    case State::ExitedWithError:
      return exitCode > 0 && exitCode < 126 ? exitCode : toInt(ExitCode::Failure);
    default:
      return toInt(ExitCode::Failure);
  }
}

int HeadlessRunner::run(const QString& trainer, std::ostream& /*out*/, std::ostream& err) {
  if (const std::string problem = validate(); !problem.empty()) {
    say(err, "tokenbench: " + problem);
    return toInt(ExitCode::Usage);
  }
  LaunchRequest request;
  request.trainer = trainer;
  if (!m_inputs.configPath.empty()) {
    request.setConfigFile(
        QFileInfo(QString::fromStdString(m_inputs.configPath)).absoluteFilePath());
  }
  request.setRunDir(QString::fromStdString(m_inputs.runDir));
  request.command.resume = m_inputs.resume;
  request.command.time_budget = m_inputs.timeBudget;

  RunController controller;
  controller.setStopGracePeriodMs(m_stopGraceMs);
  controller.setTermGracePeriodMs(m_termGraceMs);
  controller.setWatchdogTimeoutMs(m_watchdogMs);
  const StopSignalNotifier stopSignals;
  QEventLoop loop;

  // The loss of a progress line comes from the run's metrics.jsonl, the one path of metric rows
  // (the stream carries none): read when a progress line is printed, which is when a progress
  // event arrives (the trainer writes the row before the event) or at the end. The read is on
  // this thread, and may wait on a slow file system: acceptable here, as there is no window to
  // keep responsive, and only new bytes are read.
  std::optional<core::MetricsFollower> metrics;
  std::optional<double> loss;
  auto readLoss = [&] {
    if (!metrics) metrics.emplace(runDirectoryAt(controller.runDirectory()).metricsFile());
    for (const core::MetricsRow& row : metrics->poll()) {
      if (const std::optional<double> value = lossOf(row)) loss = value;
    }
  };
  std::optional<core::ProgressEvent> unprinted;
  QElapsedTimer sincePrinted;
  int shownProblems = 0;
  bool wasUnresponsive = false;

  auto printProgress = [&](const core::ProgressEvent& progress) {
    readLoss();
    say(err, progressLine(progress, loss));
    sincePrinted.start();
    unprinted.reset();
  };

  QObject::connect(&controller, &RunController::helloReceived, [&](const core::HelloEvent& e) {
    const QString processes = e.world_size == 1 ? QStringLiteral("1 process")
                                                : QStringLiteral("%1 processes").arg(e.world_size);
    // "cpu in bf16 (auto: the CPU computes bf16: AMX-BF16)"; trainers before precision: "cpu".
    QString device = QString::fromStdString(e.device);
    if (!e.precision.empty())
      device += QStringLiteral(" in ") + QString::fromStdString(e.precision);
    say(err,
        QStringLiteral("tokenbench: trainer %1 (torch %2), %3 (%4) on %5, run dir %6")
            .arg(QString::fromStdString(e.trainer_version), QString::fromStdString(e.torch_version),
                 processes, QString::fromStdString(e.launcher), device, controller.runDirectory()));
  });
  QObject::connect(
      &controller, &RunController::progressReceived, [&](const core::ProgressEvent& e) {
        const bool last = e.total > 0 && e.step >= e.total;
        if (!sincePrinted.isValid() || last || sincePrinted.elapsed() >= m_progressIntervalMs) {
          printProgress(e);
        } else {
          unprinted = e;
        }
      });
  // Phases before the first step: a line as each begins, and for a counted one its share every
  // progress interval.
  QString phaseText;
  QObject::connect(&controller, &RunController::phaseReceived, [&](const core::PhaseEvent& e) {
    const QString text = QString::fromStdString(e.text);
    const bool counted = e.total > 0;
    if (text == phaseText &&
        (!counted || (sincePrinted.isValid() && sincePrinted.elapsed() < m_progressIntervalMs)))
      return;
    phaseText = text;
    say(err, QStringLiteral("tokenbench: ") + text +
                 (counted ? QStringLiteral(" (%1 %)").arg(100 * e.done / e.total) : QString()));
    sincePrinted.start();
  });
  QObject::connect(&controller, &RunController::stderrLine,
                   [&](const QString& line) { say(err, line); });
  QObject::connect(&controller, &RunController::warningReceived, [&](const core::WarningEvent& e) {
    std::string line = "tokenbench: warning [" + e.code + "]";
    if (e.step) line += " at step " + std::to_string(*e.step);
    say(err, line + ": " + e.message);
  });
  QObject::connect(&controller, &RunController::errorReceived, [&](const core::ErrorEvent& e) {
    say(err, "tokenbench: error [" + e.code + "]: " + e.message);
    if (!e.hint.empty()) say(err, "tokenbench: hint: " + e.hint);
  });
  QObject::connect(&controller, &RunController::protocolWarning, [&](const QString& message) {
    if (shownProblems < kShownProtocolProblems) {
      say(err, QStringLiteral("tokenbench: warning: ") + message);
    } else if (shownProblems == kShownProtocolProblems) {
      say(err, "tokenbench: warning: further protocol problems are counted, not shown");
    }
    ++shownProblems;
  });
  QObject::connect(&controller, &RunController::stateChanged, [&](RunController::State state) {
    if (state == RunController::State::Unresponsive) {
      wasUnresponsive = true;
      say(err, QStringLiteral("tokenbench: warning: trainer ") + describeRun(controller.status()));
    } else if (wasUnresponsive && controller.isActive()) {
      wasUnresponsive = false;
      say(err, "tokenbench: the trainer speaks again");
    }
  });
  int stopSignalsSeen = 0;
  QObject::connect(&stopSignals, &StopSignalNotifier::stopRequested, [&](int signal) {
    if (!controller.isActive()) return;
    controller.stop();
    QString line = QStringLiteral("tokenbench: %1: %2")
                       .arg(QLatin1String(signalWord(signal)), describeRun(controller.status()));
    if (stopSignalsSeen++ == 0) {
      line += QStringLiteral(" (again: SIGTERM to the trainer; a third time: SIGKILL)");
    }
    say(err, line);
  });
  QObject::connect(&controller, &RunController::finished, &loop, &QEventLoop::quit);

  controller.start(request);
  if (controller.isActive()) {
    loop.exec();
  }
  if (unprinted) {
    printProgress(*unprinted);
  }
  say(err, QStringLiteral("tokenbench: ") + describeRun(controller.status()));
  if (controller.garbageLines() > 0 || controller.rejectedPaths() > 0) {
    say(err, QStringLiteral("tokenbench: ignored %1 stdout line(s) that were not events and %2 "
                            "path(s) outside the run directory")
                 .arg(controller.garbageLines())
                 .arg(controller.rejectedPaths()));
  }
  return exitStatus(controller.state(), controller.exitCode());
}

int HeadlessRunner::runCompare(const CompareRequest& request, std::ostream& err) {
  QProcess process;
  process.setProcessChannelMode(QProcess::ForwardedChannels);
  process.setChildProcessModifier([] { ::setpgid(0, 0); });
  process.start(request.trainer, compareArguments(request));
  if (!process.waitForStarted(-1)) {
    say(err, QStringLiteral("tokenbench: cannot start %1: %2")
                 .arg(request.trainer, process.errorString()));
    return toInt(ExitCode::Usage);
  }
  process.closeWriteChannel();

  const StopSignalNotifier stopSignals;
  QEventLoop loop;
  int stopStage = 0;
  QObject::connect(&stopSignals, &StopSignalNotifier::stopRequested, [&](int signal) {
    if (stopStage++ == 0) {
      say(err, std::string("tokenbench: ") + signalWord(signal) +
                   ": stopping the comparison (SIGTERM; again: SIGKILL)");
      process.terminate();
    } else {
      process.kill();
    }
  });
  QObject::connect(&process, &QProcess::finished, &loop, &QEventLoop::quit);
  if (process.state() != QProcess::NotRunning) {
    loop.exec();
  }
  if (process.exitStatus() == QProcess::CrashExit) {
    say(err, QStringLiteral("tokenbench: compare ended by %1").arg(signalName(process.exitCode())));
    return toInt(ExitCode::Failure);
  }
  return process.exitCode();
}

}  // namespace tb::app
