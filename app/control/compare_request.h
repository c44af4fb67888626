#pragma once
// What running `tokenbench-trainer compare` means: the Compare page builds one, CompareProcess
// runs it, and the page shows the command line.

#include "app/control/wire_text.h"
#include "core/trainer_command.h"

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QStringList>
#include <QVector>

namespace tb::app {

/// One tokenizer to compare, as the Compare form lists it: NAME=PATH on the trainer's command
/// line.
struct CompareEntry {
  QString name;  ///< letters, digits, '-', '_', '.'; not "original" (see compareEntryName())
  QString path;  ///< a checkpoint folder or a run directory (its latest checkpoint)
};

/// One `tokenbench-trainer compare` invocation: the program and core's description of its
/// arguments (paths in the local 8-bit encoding: pathText() and fileSystemPath() convert).
struct CompareRequest {
  QString trainer;               ///< absolute path of tokenbench-trainer
  core::CompareCommand command;  ///< at least one entry
};

/// The review folder `request` writes, as the window shows it.
inline QString compareOutDir(const CompareRequest& request) {
  return pathText(request.command.out_dir);
}

/// `entries` as the command's NAME=PATH pairs.
inline std::vector<std::pair<std::string, std::string>> compareEntries(
    const QVector<CompareEntry>& entries) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CompareEntry& e : entries)
    out.emplace_back(e.name.toStdString(), fileSystemPath(e.path).string());
  return out;
}

/// The trainer's arguments for `request` (program not included): core::compareArguments().
inline QStringList compareArguments(const CompareRequest& request) {
  QStringList args;
  for (const std::string& word : core::compareArguments(request.command)) {
    args << QFile::decodeName(QByteArray::fromStdString(word));
  }
  return args;
}

/// `request` as a command line for a POSIX shell (program first; words quoted where needed).
inline QString compareCommandLine(const CompareRequest& request) {
  return QFile::decodeName(QByteArray::fromStdString(core::shellCommandLine(
      QFile::encodeName(request.trainer).toStdString(), core::compareArguments(request.command))));
}

/// A name the trainer accepts for a tokenizer at `path` (its folder name, with other characters
/// replaced by '_'), different from every name in `taken` (a "-2", "-3" ... suffix).
inline QString compareEntryName(const QString& path, const QStringList& taken) {
  QString base = path;
  while (base.endsWith(QLatin1Char('/')) && base.size() > 1) base.chop(1);
  base = base.mid(base.lastIndexOf(QLatin1Char('/')) + 1);
  QString name;
  for (QChar c : base) {
    const bool plain = (c.isLetterOrNumber() && c.unicode() < 128) || c == QLatin1Char('-') ||
                       c == QLatin1Char('_') || c == QLatin1Char('.');
    name += plain ? c : QLatin1Char('_');
  }
  while (name.startsWith(QLatin1Char('.'))) name.remove(0, 1);
  if (name.isEmpty() || name == QLatin1String("original"))
    name.prepend(QStringLiteral("tokenizer-"));
  QString unique = name;
  for (int n = 2; taken.contains(unique); ++n)
    unique = name + QLatin1Char('-') + QString::number(n);
  return unique;
}

}  // namespace tb::app
