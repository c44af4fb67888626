#include "app/control/compare_process.h"

#include <QDir>
#include <QFileInfo>

namespace tb::app {
namespace {

// A line longer than this is cut: a trainer that floods stderr without newlines must not grow
// the window's memory without bound.
constexpr qsizetype kMaxLineBytes = 64 * 1024;

}  // namespace

CompareProcess::CompareProcess(QObject* parent) : QObject(parent) {
  m_killTimer.setSingleShot(true);
  m_killTimer.setInterval(kKillAfterMs);
  connect(&m_killTimer, &QTimer::timeout, this, [this] {
    if (m_process != nullptr) m_process->kill();
  });
}

CompareProcess::~CompareProcess() {
  if (m_process != nullptr) {
    m_process->disconnect(this);
    m_process->kill();
    m_process->waitForFinished(1000);
  }
}

bool CompareProcess::start(const CompareRequest& request) {
  if (isRunning()) return false;
  if (m_process != nullptr) m_process->deleteLater();
  m_request = request;
  m_tail.clear();
  m_partial.clear();
  m_cancelled = false;
  m_reported = false;

  m_process = new QProcess(this);
  m_process->setProgram(request.trainer);
  m_process->setArguments(compareArguments(request));
  m_process->setStandardOutputFile(QProcess::nullDevice());
  connect(m_process, &QProcess::readyReadStandardError, this, &CompareProcess::readStderr);
  connect(m_process, &QProcess::finished, this, &CompareProcess::onFinished);
  connect(m_process, &QProcess::errorOccurred, this, &CompareProcess::onError);
  m_process->start();
  return true;
}

void CompareProcess::cancel() {
  if (!isRunning()) return;
  m_cancelled = true;
  m_process->terminate();
  m_killTimer.start();
}

bool CompareProcess::isRunning() const {
  return m_process != nullptr && m_process->state() != QProcess::NotRunning;
}

void CompareProcess::readStderr() {
  m_partial += m_process->readAllStandardError();
  qsizetype newline = 0;
  while ((newline = m_partial.indexOf('\n')) >= 0) {
    keepLine(QString::fromUtf8(m_partial.left(newline)).trimmed());
    m_partial.remove(0, newline + 1);
  }
  if (m_partial.size() > kMaxLineBytes) {
    keepLine(QString::fromUtf8(m_partial.left(kMaxLineBytes)).trimmed() + QStringLiteral("\u2026"));
    m_partial.clear();
  }
}

void CompareProcess::keepLine(const QString& line) {
  if (line.isEmpty()) return;
  m_tail.append(line);
  while (m_tail.size() > kKeptLines) m_tail.removeFirst();
  Q_EMIT stderrLine(line);
}

QString CompareProcess::withTail(const QString& headline) const {
  if (m_tail.isEmpty()) return headline;
  return headline + QLatin1Char('\n') + m_tail.join(QLatin1Char('\n'));
}

void CompareProcess::onFinished(int exitCode, QProcess::ExitStatus status) {
  m_killTimer.stop();
  readStderr();
  if (!m_partial.isEmpty()) {
    keepLine(QString::fromUtf8(m_partial).trimmed());
    m_partial.clear();
  }
  if (m_reported) return;
  m_reported = true;
  if (m_cancelled) {
    Q_EMIT failed(tr("Comparison cancelled."));
  } else if (status == QProcess::CrashExit) {
    Q_EMIT failed(withTail(tr("The trainer crashed.")));
  } else if (exitCode != 0) {
    Q_EMIT failed(withTail(tr("The trainer exited with status %1.").arg(exitCode)));
  } else if (!QFileInfo(QDir(compareOutDir(m_request)).filePath(QStringLiteral("metrics.json")))
                  .isFile()) {
    Q_EMIT failed(withTail(tr("The trainer exited 0 but wrote no metrics.json in %1.")
                               .arg(QDir::toNativeSeparators(compareOutDir(m_request)))));
  } else {
    Q_EMIT succeeded(compareOutDir(m_request));
  }
}

void CompareProcess::onError(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart || m_reported) return;
  m_reported = true;
  Q_EMIT failed(tr("Could not start %1: %2")
                    .arg(QDir::toNativeSeparators(m_request.trainer), m_process->errorString()));
}

}  // namespace tb::app
