#include "app/text/run_status_text.h"

#include "app/text/duration_text.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QLatin1String>

#include <cmath>
#include <csignal>

namespace tb::app {
namespace {

// Longest stderr line quoted in describeRun().
constexpr int kMaxQuotedChars = 240;

QString tr(const char* text) { return QCoreApplication::translate("RunStatusText", text); }

QString fromUtf8(const std::string& text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

}  // namespace

QString describeRun(const RunStatus& s) {
  using State = RunStatus::State;
  const QString atStep =
      s.lastStep >= 0 ? tr(" at step %1").arg(s.lastStep) : tr(" before the first step");
  QString lastStderr = s.lastStderrLine;
  if (lastStderr.size() > kMaxQuotedChars) {
    lastStderr = lastStderr.left(kMaxQuotedChars) + QStringLiteral("\u2026");
  }
  const QString program = QFileInfo(s.trainer).fileName();

  switch (s.state) {
    case State::Idle:
      return tr("no run started");
    case State::Starting:
      return tr("starting %1").arg(program);
    case State::Running: {
      if (!s.progress) {
        return s.lastStep >= 0 ? tr("running, step %1").arg(s.lastStep) : tr("running");
      }
      QString text = tr("running, step %1/%2").arg(s.progress->step).arg(s.progress->total);
      if (std::isfinite(s.progress->eta_s)) {
        text += tr(", ETA %1").arg(formatDuration(s.progress->eta_s));
      }
      return text;
    }
    case State::Stopping:
      switch (s.stopStage) {
        case 1:
          // The trainer ends the step under way (which may take a while) before it stops.
          return tr("stopping after the current step; a checkpoint is being written");
        case 2:
          return tr("stopping: SIGTERM sent (no stop after %1)")
              .arg(formatDuration(s.stopGraceMs / 1000.0));
        default:
          return tr("stopping: SIGKILL sent");
      }
    case State::Completed:
      return tr("completed%1").arg(atStep);
    case State::Stopped:
      return tr("stopped%1").arg(atStep);
    case State::FailedToStart:
      return tr("failed to start %1: %2").arg(s.trainer, s.startError);
    case State::Crashed:
      return tr("crashed (%1)%2").arg(signalName(s.exitSignal), atStep);
    case State::Killed: {
      QString text = tr("killed (%1)%2").arg(signalName(s.exitSignal), atStep);
      if (s.stopStage >= 2) {
        text += s.exitSignal == SIGKILL ? tr(" after it ignored the stop request and SIGTERM")
                                        : tr(" after it ignored the stop request");
      }
      return text;
    }
    case State::ExitedWithError: {
      if (s.error) {
        return tr("failed%1: %2").arg(atStep, fromUtf8(s.error->message));
      }
      QString text = s.exitCode == 2 ? tr("exited with status 2 (usage or configuration error)")
                                     : tr("exited with status %1%2").arg(s.exitCode).arg(atStep);
      if (s.exitCode == 0 && s.done) {
        text = tr("reported done \"%1\"%2").arg(fromUtf8(s.done->status), atStep);
      }
      if (!lastStderr.isEmpty()) {
        text += QStringLiteral(": ") + lastStderr;
      }
      return text;
    }
    case State::ExitedWithoutDone:
      return tr("exited with status 0%1 without reporting done").arg(atStep);
    case State::Unresponsive:
      return tr("unresponsive: no output for %1%2")
          .arg(formatDuration(s.silentForS))
          .arg(s.lastStep >= 0 ? tr(" (step %1)").arg(s.lastStep) : QString());
  }
  return {};
}

QString runStateName(RunStatus::State state) {
  using State = RunStatus::State;
  switch (state) {
    case State::Idle:
      return tr("idle");
    case State::Starting:
      return tr("starting");
    case State::Running:
      return tr("running");
    case State::Stopping:
      return tr("stopping");
    case State::Completed:
      return tr("completed");
    case State::Stopped:
      return tr("stopped");
    case State::FailedToStart:
      return tr("failed to start");
    case State::Crashed:
      return tr("crashed");
    case State::Killed:
      return tr("killed");
    case State::ExitedWithError:
      return tr("exited with error");
    case State::ExitedWithoutDone:
      return tr("exited without done");
    case State::Unresponsive:
      return tr("unresponsive");
  }
  return {};
}

QString signalName(int signal) {
  switch (signal) {
    case SIGABRT:
      return QStringLiteral("SIGABRT");
    case SIGBUS:
      return QStringLiteral("SIGBUS");
    case SIGFPE:
      return QStringLiteral("SIGFPE");
    case SIGHUP:
      return QStringLiteral("SIGHUP");
    case SIGILL:
      return QStringLiteral("SIGILL");
    case SIGINT:
      return QStringLiteral("SIGINT");
    case SIGKILL:
      return QStringLiteral("SIGKILL");
    case SIGPIPE:
      return QStringLiteral("SIGPIPE");
    case SIGQUIT:
      return QStringLiteral("SIGQUIT");
    case SIGSEGV:
      return QStringLiteral("SIGSEGV");
    case SIGTERM:
      return QStringLiteral("SIGTERM");
    case SIGTRAP:
      return QStringLiteral("SIGTRAP");
    case SIGXCPU:
      return QStringLiteral("SIGXCPU");
    case SIGXFSZ:
      return QStringLiteral("SIGXFSZ");
    default:
      return QStringLiteral("signal %1").arg(signal);
  }
}

QString ignoredLineText(const std::string& reason) {
  return tr("ignored a stdout line that is not an event (%1)").arg(fromUtf8(reason));
}

QString ignoredPathText(const char* what, const std::string& path) {
  return tr("ignored a %1 outside the run directory: %2").arg(QLatin1String(what), fromUtf8(path));
}

QString droppedStderrLineText(std::size_t maxBytes) {
  return tr("[a stderr line longer than %1 KiB was dropped]").arg(maxBytes / 1024);
}

}  // namespace tb::app
