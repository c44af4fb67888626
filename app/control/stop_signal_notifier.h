#pragma once

#include <QObject>

class QSocketNotifier;

namespace tb::app {

/// Turns SIGINT and SIGTERM into a Qt signal on the event loop (the self-pipe trick: the handler
/// only writes the signal number into a pipe; a QSocketNotifier reads it). While one exists, those
/// signals no longer end the process; the destructor restores the previous handlers. At most one
/// may exist at a time.
class StopSignalNotifier : public QObject {
  Q_OBJECT

 public:
  explicit StopSignalNotifier(QObject* parent = nullptr);
  ~StopSignalNotifier() override;

  /// False when the pipe or the handlers could not be installed (then nothing was changed).
  bool isInstalled() const { return m_installed; }

 Q_SIGNALS:
  /// SIGINT or SIGTERM arrived (`signal` is its number); emitted once per delivery.
  void stopRequested(int signal);

 private:
  void readPipe();

  QSocketNotifier* m_notifier = nullptr;
  bool m_installed = false;
};

}  // namespace tb::app
