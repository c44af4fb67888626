#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

class QThread;

namespace tb::app {

/// A thread of its own for reads of run-directory files, so that the thread that asks (the
/// window's) never waits on a file system: a slow or hung network mount, a FIFO where a file
/// should be, a long file read for the first time. Reads run one after another, in the order
/// they were asked for; each one's result is handed back by a queued call in the application's
/// thread (where the window's objects live), and only while this object exists. Destroying it
/// does not wait for a stalled read either: its thread ends (and deletes itself) once the read
/// returns. A read must therefore own what it uses (copies, shared pointers), never the asker.
class FileReadThread : public QObject {
  Q_OBJECT

 public:
  /// `name` names the thread (seen in a debugger or `top -H`).
  explicit FileReadThread(const QString& name, QObject* parent = nullptr);
  ~FileReadThread() override;

  /// Runs `read` on the thread, then `done` in the application's thread; returns at once.
  void post(std::function<void()> read, std::function<void()> done);

  /// Runs `read()` on the thread, then `deliver(result)` in the application's thread.
  template <typename Read, typename Deliver>
  void read(Read read, Deliver deliver) {
    using Result = std::invoke_result_t<Read>;
    auto result = std::make_shared<std::optional<Result>>();
    post([read = std::move(read), result] { result->emplace(read()); },
         [deliver = std::move(deliver), result] { deliver(std::move(**result)); });
  }

  /// Reads asked for and not delivered yet.
  int pendingReads() const { return m_pending; }
  /// Runs the event loop until every read asked for so far has been delivered or `timeoutMs`
  /// has passed; true when none is left. For tests and scripts: the window never waits.
  bool waitForReads(int timeoutMs = 10000);

 private:
  QThread* m_thread = nullptr;
  QObject* m_worker = nullptr;  // lives in m_thread: reads run in its event loop
  int m_pending = 0;
};

}  // namespace tb::app
