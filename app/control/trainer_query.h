#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

class QProcess;

namespace tb::app {

/// A short trainer command whose answer the window shows (`model-info --config -`,
/// `data-info --config - ...`): run in a QProcess, never blocking the UI.
///
/// request() is debounced: the command starts debounceInterval() after the last request, and a
/// request made while an older command still runs kills that command, whose output is then
/// ignored. Only the newest request ever reports. A command that has not finished after
/// timeLimit() is killed and reported as failed.
class TrainerQuery : public QObject {
  Q_OBJECT

 public:
  /// Default delay between the last request and the start of the command, in milliseconds.
  static constexpr int kDefaultDebounceMs = 400;
  /// Default time a command may take, in milliseconds.
  static constexpr int kDefaultTimeLimitMs = 120000;
  /// Bytes of stderr kept for the failure message.
  static constexpr int kMaxErrorBytes = 16 * 1024;

  explicit TrainerQuery(QObject* parent = nullptr);
  ~TrainerQuery() override;

  /// The trainer executable ("" when none was found: requests then fail at once).
  void setProgram(const QString& program);
  QString program() const { return m_program; }

  void setDebounceInterval(int milliseconds);
  int debounceInterval() const { return m_debounce.interval(); }
  void setTimeLimit(int milliseconds) { m_timeLimitMs = milliseconds; }

  /// Asks for `arguments` to be run with `input` written to the command's stdin. Replaces any
  /// request not yet started and kills a command still running.
  void request(const QStringList& arguments, const QByteArray& input);
  /// Forgets pending work and kills a running command; nothing more is reported.
  void cancel();

  /// True from request() until the answer (or failure) is reported.
  bool isBusy() const;
  /// Commands started so far (stale ones included), for tests and diagnostics.
  int startedCount() const { return m_started; }

 Q_SIGNALS:
  /// The newest request is waiting or running (emitted once per request()).
  void busy();
  /// The command exited with status 0; `output` is its stdout.
  void succeeded(const QByteArray& output);
  /// The command could not start, crashed, timed out or exited non-zero. `message` is its
  /// stderr (trimmed) or a description of what happened; `exitCode` is -1 when it did not exit
  /// normally.
  void failed(const QString& message, int exitCode);

 private:
  void start();
  void killRunning();

  QString m_program;
  QStringList m_arguments;
  QByteArray m_input;
  QTimer m_debounce;
  QTimer m_timeout;
  QProcess* m_process = nullptr;
  bool m_pending = false;
  int m_started = 0;
  int m_timeLimitMs = kDefaultTimeLimitMs;
};

}  // namespace tb::app
