#include "app/control/file_read_thread.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QThread>

namespace tb::app {

FileReadThread::FileReadThread(const QString& name, QObject* parent) : QObject(parent) {
  // No parent: the thread may outlive this object while it finishes a stalled read.
  m_thread = new QThread;
  m_thread->setObjectName(name);
  m_worker = new QObject;
  m_worker->moveToThread(m_thread);
  connect(m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  connect(m_thread, &QThread::finished, m_thread, &QObject::deleteLater);
  m_thread->start();
}

FileReadThread::~FileReadThread() {
  // Not waited for: a read stalled on a dead file system would hold the window. The reads own
  // what they use and deliver only while this object exists; the thread and the worker delete
  // themselves when the last read returns.
  m_thread->quit();
}

void FileReadThread::post(std::function<void()> read, std::function<void()> done) {
  ++m_pending;
  QPointer<FileReadThread> self(this);
  QMetaObject::invokeMethod(
      m_worker,
      [self, read = std::move(read), done = std::move(done)]() mutable {
        read();
        // Through the application object, which outlives every reader: `self` is checked in the
        // thread it lives in, not here.
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, done = std::move(done)] {
              if (self) {
                --self->m_pending;
                done();
              }
            },
            Qt::QueuedConnection);
      },
      Qt::QueuedConnection);
}

bool FileReadThread::waitForReads(int timeoutMs) {
  QElapsedTimer clock;
  clock.start();
  while (m_pending > 0 && clock.elapsed() < timeoutMs) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    if (m_pending > 0) {
      QThread::msleep(1);  // the read is under way on the reading thread
    }
  }
  return m_pending == 0;
}

}  // namespace tb::app
