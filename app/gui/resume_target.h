#pragma once

#include "app/control/file_read_thread.h"
#include "app/control/run_summary_reader.h"

#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace tb::app {

/// The run directory Resume would continue (the run open in the window), as its files last
/// said: whether it holds a run's config.json, and the run's summary (running elsewhere,
/// completed, ...). The files are read on a thread of its own, never on the window's; asked
/// again while a read is on its way, it reads once more when that one lands, so what it says is
/// never older than the last ask.
class ResumeTarget : public QObject {
  Q_OBJECT

 public:
  using DirectoryProvider = std::function<QString()>;

  explicit ResumeTarget(QObject* parent = nullptr);

  /// Where the directory comes from (asked at every read; "" without a provider).
  void setDirectoryProvider(DirectoryProvider provider);
  /// The directory as the provider names it now.
  QString directory() const;
  /// Reads the directory's files again, off this thread; readLanded() is signalled when they land.
  void refresh();
  /// Runs the event loop until the reads asked for so far have been delivered, or `timeoutMs`
  /// passed; true when none is left. For tests: the window never waits.
  bool waitForReads(int timeoutMs);

  /// The directory the last read that landed was of ("" before the first).
  QString readDirectory() const { return m_dir; }
  /// Whether readDirectory() held a run's config.json.
  bool isResumable() const { return m_resumable; }
  /// The summary of the run in readDirectory(), when it is one (and not forgotten since).
  const std::optional<RunSummary>& summary() const { return m_summary; }
  /// Forgets the summary (it described another directory) until the next read lands.
  void forgetSummary() { m_summary.reset(); }

 Q_SIGNALS:
  /// A read landed: readDirectory(), isResumable() and summary() say what it found.
  void readLanded();

 private:
  DirectoryProvider m_directory;
  FileReadThread m_reads{QStringLiteral("run control reads")};
  std::shared_ptr<RunSummaryReader> m_reader =
      std::make_shared<RunSummaryReader>();  // used on m_reads only
  QString m_dir;
  bool m_resumable = false;
  std::optional<RunSummary> m_summary;
  bool m_reading = false;  // a read is on its way
  bool m_stale = false;    // asked again while it was: read once more when it lands
};

}  // namespace tb::app
