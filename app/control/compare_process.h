#pragma once

#include "app/control/compare_request.h"

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

namespace tb::app {

/// Runs one `tokenbench-trainer compare` and says how it ended. The trainer's stderr (its
/// progress and its error messages) is passed on line by line and the last lines are kept, so a
/// failure is reported with the trainer's own words. Success is exit status 0 *and* a
/// metrics.json in the output folder.
class CompareProcess : public QObject {
  Q_OBJECT

 public:
  /// How many of the trainer's last stderr lines are kept for the failure message.
  static constexpr int kKeptLines = 40;
  /// Grace period between SIGTERM and SIGKILL when cancelling, in milliseconds.
  static constexpr int kKillAfterMs = 3000;

  explicit CompareProcess(QObject* parent = nullptr);
  ~CompareProcess() override;

  /// Starts the trainer for `request`. Returns false (and emits nothing) while one is running.
  bool start(const CompareRequest& request);
  /// Stops a running comparison: SIGTERM, then SIGKILL after kKillAfterMs. Ends with failed().
  void cancel();
  bool isRunning() const;
  /// The last stderr lines of the current or last run (at most kKeptLines).
  QStringList stderrTail() const { return m_tail; }
  /// The output folder of the current or last run.
  QString outDir() const { return compareOutDir(m_request); }

 Q_SIGNALS:
  /// One line the trainer wrote on stderr (without the newline).
  void stderrLine(const QString& line);
  /// The trainer exited 0 and wrote `outDir`/metrics.json.
  void succeeded(const QString& outDir);
  /// It could not start, crashed, was cancelled, exited non-zero, or wrote no metrics.json.
  /// `message` says which, followed by the trainer's last stderr lines.
  void failed(const QString& message);

 private:
  void readStderr();
  void onFinished(int exitCode, QProcess::ExitStatus status);
  void onError(QProcess::ProcessError error);
  void keepLine(const QString& line);
  QString withTail(const QString& headline) const;

  QProcess* m_process = nullptr;
  QTimer m_killTimer;
  CompareRequest m_request;
  QStringList m_tail;
  QByteArray m_partial;
  bool m_cancelled = false;
  bool m_reported = false;
};

}  // namespace tb::app
