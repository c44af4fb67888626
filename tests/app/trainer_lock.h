#pragma once
// For the tests of pages that follow a run directory: the lock a live trainer holds on it.

#include <QDir>
#include <QFile>
#include <QString>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace tb::test {

/// Holds the flock a running trainer holds on `<dir>/.lock` (as the trainer takes it) for this
/// object's life: the window then sees the run as live, as it sees a run another process
/// trains. A run with neither this lock nor a done event is one whose trainer is gone.
class TrainerLock {
 public:
  explicit TrainerLock(const QString& dir)
      : m_fd(::open(QFile::encodeName(QDir(dir).filePath(QStringLiteral(".lock"))).constData(),
                    O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (m_fd >= 0) ::flock(m_fd, LOCK_EX | LOCK_NB);
  }
  ~TrainerLock() {
    if (m_fd >= 0) ::close(m_fd);
  }
  TrainerLock(const TrainerLock&) = delete;
  TrainerLock& operator=(const TrainerLock&) = delete;

 private:
  int m_fd;
};

}  // namespace tb::test
