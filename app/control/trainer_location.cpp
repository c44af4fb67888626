#include "app/control/trainer_location.h"

#include <QDir>
#include <QFileInfo>
#include <QStringList>
#include <QtGlobal>

namespace tb::app {
namespace {

bool isExecutableFile(const QString& path) {
  const QFileInfo info(path);
  return info.isFile() && info.isExecutable();
}

TrainerLocation chosen(const QString& path, const QString& origin, bool fromOption) {
  TrainerLocation location;
  location.origin = origin;
  if (isExecutableFile(path)) {
    location.path = QFileInfo(path).absoluteFilePath();
  } else {
    location.problem = QStringLiteral("%1: not an executable file: %2").arg(origin, path);
    location.explicitChoiceInvalid = fromOption;
  }
  return location;
}

}  // namespace

TrainerLocation TrainerLocation::find(const QString& overridePath, const QString& environmentValue,
                                      const QString& applicationDir) {
  if (!overridePath.isEmpty()) {
    return chosen(overridePath, QStringLiteral("--trainer"), true);
  }
  if (!environmentValue.isEmpty()) {
    return chosen(environmentValue, QString::fromLatin1(kEnvironmentVariable), false);
  }
  const QDir dir(applicationDir);
  const QString name = QString::fromLatin1(kExecutableName);
  const struct {
    QString path;
    QString origin;
  } candidates[] = {
      {dir.filePath(name), QStringLiteral("beside tokenbench")},
      // TB_TRAINER_RELATIVE_DIR: the installed libexec directory relative to the bin directory.
      {QDir::cleanPath(dir.filePath(QStringLiteral(TB_TRAINER_RELATIVE_DIR "/") + name)),
       QStringLiteral("installed layout")},
  };
  QStringList searched;
  for (const auto& candidate : candidates) {
    if (isExecutableFile(candidate.path)) {
      TrainerLocation location;
      location.path = QFileInfo(candidate.path).absoluteFilePath();
      location.origin = candidate.origin;
      return location;
    }
    searched.append(candidate.path);
  }
  TrainerLocation location;
  location.problem = QStringLiteral("%1 not found in %2; set %3 or pass --trainer")
                         .arg(name, searched.join(QStringLiteral(" or ")),
                              QString::fromLatin1(kEnvironmentVariable));
  return location;
}

TrainerLocation TrainerLocation::findFromEnvironment(const QString& overridePath,
                                                     const QString& applicationDir) {
  return find(overridePath, qEnvironmentVariable(kEnvironmentVariable), applicationDir);
}

}  // namespace tb::app
