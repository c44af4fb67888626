#pragma once
// For the end-to-end tests with the real trainer: $TB_TEST_TRAINER (set by CTest when the
// trainer is part of the build) and a configuration for a run of a few seconds.

#include <QByteArray>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>

namespace tb::test {

/// The real tokenbench-trainer, or "" when the build has none.
inline QString realTrainer() { return QString::fromLocal8Bit(qgetenv("TB_TEST_TRAINER")); }

/// Writes the demo preset cut to 6 steps, with validation, a sample and a checkpoint at step 3
/// and 6, to `path`. Returns "" or what went wrong.
inline QString writeTinyRunConfig(const QString& trainer, const QString& path) {
  QProcess print;
  print.start(trainer,
              {QStringLiteral("print-config"), QStringLiteral("--preset"), QStringLiteral("demo")});
  if (!print.waitForFinished(60000) || print.exitCode() != 0) {
    return QStringLiteral("print-config failed: ") +
           QString::fromUtf8(print.readAllStandardError());
  }
  QJsonObject config = QJsonDocument::fromJson(print.readAllStandardOutput()).object();
  QJsonObject train = config.value(QStringLiteral("train")).toObject();
  train[QStringLiteral("max_steps")] = 6;
  train[QStringLiteral("log_every")] = 1;
  train[QStringLiteral("valid_every")] = 3;
  train[QStringLiteral("valid_clips")] = 2;
  train[QStringLiteral("sample_every")] = 3;
  train[QStringLiteral("checkpoint_every")] = 3;
  config[QStringLiteral("train")] = train;
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(QJsonDocument(config).toJson()) <= 0) {
    return QStringLiteral("cannot write ") + path;
  }
  return {};
}

}  // namespace tb::test
