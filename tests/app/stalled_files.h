#pragma once
// For the tests that the window never waits on a run directory: files that stall whoever reads
// them, as a hung network file system does, and a measure of the event loop's responsiveness.

#include <QElapsedTimer>
#include <QFile>
#include <QString>
#include <QStringList>
#include <QTest>
#include <QTimer>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>

namespace tb::test {

/// Makes `path` a FIFO nobody writes: a reader that opens it waits for a writer, as a read on a
/// hung network file system waits for its server.
inline bool makeStalledFile(const QString& path) {
  return ::mkfifo(QFile::encodeName(path).constData(), 0600) == 0;
}

/// Milliseconds until a 10 ms single-shot timer fires in this thread's event loop (-1 after
/// 5 s): under 100 when nothing holds the loop.
inline qint64 timerLatencyMs() {
  QElapsedTimer clock;
  clock.start();
  qint64 firedAfterMs = -1;
  QTimer::singleShot(10, [&] { firedAfterMs = clock.elapsed(); });
  while (firedAfterMs < 0 && clock.elapsed() < 5000) QTest::qWait(1);
  return firedAfterMs;
}

/// Lets the readers stalled on the FIFOs `paths` go on (a writer opens and closes each: they
/// read end of file) until `finished()` says every read is delivered, for at most 5 s, so that
/// no reading thread outlives the test. True when finished() came true.
inline bool releaseStalledFiles(const QStringList& paths, const std::function<bool()>& finished) {
  QElapsedTimer clock;
  clock.start();
  while (clock.elapsed() < 5000) {
    for (const QString& path : paths) {
      const int writer =
          ::open(QFile::encodeName(path).constData(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (writer >= 0) ::close(writer);  // else ENXIO: no reader in open() right now
    }
    if (finished()) return true;
  }
  return false;
}

}  // namespace tb::test
