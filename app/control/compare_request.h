#pragma once
// What running `tokenbench-trainer compare` means: the Compare page builds one, CompareProcess
// runs it, and the page shows the command line.

#include "core/trainer_command.h"

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QStringList>
#include <QVector>

namespace tb::app {

/// One tokenizer to compare: NAME=PATH on the trainer's command line.
struct CompareEntry {
  QString name;  ///< letters, digits, '-', '_', '.'; not "original" (see compareEntryName())
  QString path;  ///< a checkpoint folder or a run directory (its latest checkpoint)
};

/// One `tokenbench-trainer compare` invocation.
struct CompareRequest {
  QString trainer;                ///< absolute path of tokenbench-trainer
  QVector<CompareEntry> entries;  ///< at least one
  QString outDir;                 ///< where metrics.json, GIFs, strips and grid.png go
  QString dataDir;                ///< videos or images; empty: procedural clips
  QString dataType = QStringLiteral("videos");  ///< "videos" or "images" (with dataDir)
  int clips = 4;                                ///< clips to compare (>= 1)
  QString lpipsNet = QStringLiteral("alex");    ///< "alex" or "vgg" (with both weight files)
  QString lpipsBackbone;                        ///< LPIPS backbone weights; empty: no LPIPS
  QString lpipsLin;                             ///< LPIPS linear-layer weights; empty: no LPIPS
};

/// `request` as core's description of the command (file names in the local 8-bit encoding).
inline core::CompareCommand compareCommand(const CompareRequest& request) {
  core::CompareCommand command;
  for (const CompareEntry& e : request.entries) {
    command.entries.emplace_back(e.name.toStdString(), QFile::encodeName(e.path).toStdString());
  }
  command.out_dir = QFile::encodeName(request.outDir).toStdString();
  command.data_dir = QFile::encodeName(request.dataDir).toStdString();
  command.data_type = request.dataType.toStdString();
  command.clips = request.clips;
  command.lpips_net = request.lpipsNet.toStdString();
  command.lpips_backbone = QFile::encodeName(request.lpipsBackbone).toStdString();
  command.lpips_lin = QFile::encodeName(request.lpipsLin).toStdString();
  return command;
}

/// The trainer's arguments for `request` (program not included): core::compareArguments().
inline QStringList compareArguments(const CompareRequest& request) {
  QStringList args;
  for (const std::string& word : core::compareArguments(compareCommand(request))) {
    args << QFile::decodeName(QByteArray::fromStdString(word));
  }
  return args;
}

/// `request` as a command line for a POSIX shell (program first; words quoted where needed).
inline QString compareCommandLine(const CompareRequest& request) {
  return QFile::decodeName(QByteArray::fromStdString(
      core::shellCommandLine(QFile::encodeName(request.trainer).toStdString(),
                             core::compareArguments(compareCommand(request)))));
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
