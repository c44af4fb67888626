#pragma once
// What starting a training run means, shared by the Setup page (which shows the exact command
// line), the RunController (which starts it) and the headless runner.

#include "core/trainer_command.h"

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QStringList>

#include <string>

namespace tb::app {

/// One `tokenbench-trainer train` invocation.
struct LaunchRequest {
  QString trainer;           ///< absolute path of tokenbench-trainer
  QString configFile;        ///< run configuration (JSON); may be empty when resuming
  QString runDir;            ///< run directory the trainer writes
  bool resume = false;       ///< continue the run in runDir from its last checkpoint
  bool controlStdin = true;  ///< the trainer reads stop/checkpoint lines on stdin
  QString timeBudget;        ///< e.g. "20m"; empty for none
};

/// `request` as core's description of the command (file names in the local 8-bit encoding).
inline core::TrainCommand trainCommand(const LaunchRequest& request) {
  core::TrainCommand command;
  command.config_file = QFile::encodeName(request.configFile).toStdString();
  command.run_dir = QFile::encodeName(request.runDir).toStdString();
  command.resume = request.resume;
  command.control_stdin = request.controlStdin;
  command.time_budget = request.timeBudget.toStdString();
  return command;
}

/// The trainer's arguments for `request` (program not included): core::trainArguments().
inline QStringList trainerArguments(const LaunchRequest& request) {
  QStringList args;
  for (const std::string& word : core::trainArguments(trainCommand(request))) {
    args << QFile::decodeName(QByteArray::fromStdString(word));
  }
  return args;
}

/// The command line a user could paste into a shell: program and arguments, each quoted for a
/// POSIX shell where needed (core::shellCommandLine()).
inline QString shellCommandLine(const LaunchRequest& request) {
  return QFile::decodeName(QByteArray::fromStdString(
      core::shellCommandLine(QFile::encodeName(request.trainer).toStdString(),
                             core::trainArguments(trainCommand(request)))));
}

}  // namespace tb::app
