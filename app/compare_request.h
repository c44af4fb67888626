#pragma once
// What running `tokenbench-trainer compare` means: the Compare page builds one, CompareProcess
// runs it, and the page shows the command line.

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

/// The trainer's arguments for `request` (program not included), in the order its usage lists
/// them. LPIPS options are passed only when both weight files are given.
inline QStringList compareArguments(const CompareRequest& request) {
  QStringList args{QStringLiteral("compare")};
  for (const CompareEntry& e : request.entries) {
    args << QStringLiteral("--checkpoint") << e.name + QLatin1Char('=') + e.path;
  }
  args << QStringLiteral("--out") << request.outDir;
  if (!request.dataDir.isEmpty()) {
    args << QStringLiteral("--data") << request.dataDir << QStringLiteral("--data-type")
         << request.dataType;
  }
  args << QStringLiteral("--clips") << QString::number(request.clips);
  if (!request.lpipsBackbone.isEmpty() && !request.lpipsLin.isEmpty()) {
    args << QStringLiteral("--lpips-net") << request.lpipsNet << QStringLiteral("--lpips-backbone")
         << request.lpipsBackbone << QStringLiteral("--lpips-lin") << request.lpipsLin;
  }
  return args;
}

/// `request` as a command line for a POSIX shell (program first; words quoted where needed).
inline QString compareCommandLine(const CompareRequest& request) {
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
  for (const QString& a : compareArguments(request)) words << quote(a);
  return words.join(QLatin1Char(' '));
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
