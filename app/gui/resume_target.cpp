#include "app/gui/resume_target.h"

#include "app/control/wire_text.h"

#include <QFileInfo>

#include <utility>

namespace tb::app {

ResumeTarget::ResumeTarget(QObject* parent) : QObject(parent) {}

void ResumeTarget::setDirectoryProvider(DirectoryProvider provider) {
  m_directory = std::move(provider);
}

QString ResumeTarget::directory() const { return m_directory ? m_directory() : QString(); }

void ResumeTarget::refresh() {
  if (m_reading) {
    m_stale = true;
    return;
  }
  m_reading = true;
  m_stale = false;
  const QString dir = directory();
  struct OpenRun {
    bool resumable = false;
    std::optional<RunSummary> summary;
  };
  m_reads.read(
      [dir, reader = m_reader] {
        OpenRun run;
        run.resumable =
            !dir.isEmpty() && QFileInfo(pathText(runDirectoryAt(dir).configFile())).isFile();
        if (run.resumable && RunSummaryReader::isRunDirectory(dir)) run.summary = reader->read(dir);
        return run;
      },
      [this, dir](OpenRun run) {
        m_reading = false;
        m_dir = dir;
        m_resumable = run.resumable;
        m_summary = std::move(run.summary);
        if (m_stale || dir != directory()) {
          refresh();  // what was read is already old: show it, and read again
        }
        Q_EMIT readLanded();
      });
}

bool ResumeTarget::waitForReads(int timeoutMs) { return m_reads.waitForReads(timeoutMs); }

}  // namespace tb::app
