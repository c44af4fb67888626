#pragma once
// What starting a training run means, shared by the Setup page (which shows the exact command
// line), the RunController (which starts it) and the headless runner.

#include <QString>
#include <QStringList>

namespace tb::app {

/// One `tokenbench-trainer train` invocation.
struct LaunchRequest {
  QString trainer;     ///< absolute path of tokenbench-trainer
  QString configFile;  ///< run configuration (JSON); may be empty when resuming
  QString runDir;      ///< run directory the trainer writes
  bool resume = false;        ///< continue the run in runDir from its last checkpoint
  bool controlStdin = true;   ///< the trainer reads stop/checkpoint lines on stdin
  QString timeBudget;         ///< e.g. "20m"; empty for none
};

/// The trainer's arguments for `request` (program not included), in the order the trainer's
/// usage documents them.
inline QStringList trainerArguments(const LaunchRequest& request) {
  QStringList args{QStringLiteral("train")};
  if (!request.configFile.isEmpty()) args << QStringLiteral("--config") << request.configFile;
  args << QStringLiteral("--run-dir") << request.runDir;
  if (request.resume) args << QStringLiteral("--resume");
  if (!request.timeBudget.isEmpty()) args << QStringLiteral("--time-budget") << request.timeBudget;
  if (request.controlStdin) args << QStringLiteral("--control-stdin");
  return args;
}

/// The command line a user could paste into a shell: program and arguments, each quoted for a
/// POSIX shell where needed.
inline QString shellCommandLine(const LaunchRequest& request) {
  auto quote = [](const QString& word) {
    static const QString kSafe = QStringLiteral("-_./=:,+@%");
    bool safe = !word.isEmpty();
    for (QChar c : word) {
      if (!(c.isLetterOrNumber() && c.unicode() < 128) && !kSafe.contains(c)) safe = false;
    }
    if (safe) return word;
    QString quoted = word;
    quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
  };
  QStringList words{quote(request.trainer)};
  for (const QString& a : trainerArguments(request)) words << quote(a);
  return words.join(QLatin1Char(' '));
}

}  // namespace tb::app
