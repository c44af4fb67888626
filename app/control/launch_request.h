#pragma once
// What starting a training run means, shared by the Setup page (which shows the exact command
// line), the RunController (which starts it) and the headless runner.

#include "app/control/wire_text.h"
#include "core/trainer_command.h"

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QStringList>

#include <string>

namespace tb::app {

/// One `tokenbench-trainer train` invocation: the program and core's description of its
/// arguments (paths in the local 8-bit encoding; the accessors convert).
struct LaunchRequest {
  QString trainer;             ///< absolute path of tokenbench-trainer
  core::TrainCommand command;  ///< RunController sets control_stdin; the Setup page shows it

  /// The run configuration (JSON); empty when resuming.
  QString configFile() const { return pathText(command.config_file); }
  void setConfigFile(const QString& path) { command.config_file = fileSystemPath(path).string(); }
  /// The run directory the trainer writes.
  QString runDir() const { return pathText(command.run_dir); }
  void setRunDir(const QString& path) { command.run_dir = fileSystemPath(path).string(); }
};

/// The trainer's arguments for `request` (program not included): core::trainArguments().
inline QStringList trainerArguments(const LaunchRequest& request) {
  QStringList args;
  for (const std::string& word : core::trainArguments(request.command)) {
    args << QFile::decodeName(QByteArray::fromStdString(word));
  }
  return args;
}

/// The command line a user could paste into a shell: program and arguments, each quoted for a
/// POSIX shell where needed (core::shellCommandLine()).
inline QString shellCommandLine(const LaunchRequest& request) {
  return QFile::decodeName(QByteArray::fromStdString(core::shellCommandLine(
      QFile::encodeName(request.trainer).toStdString(), core::trainArguments(request.command))));
}

}  // namespace tb::app
