#include "app/control/trainer_query.h"

#include <QFileInfo>
#include <QProcess>

namespace tb::app {

TrainerQuery::TrainerQuery(QObject* parent) : QObject(parent) {
  m_debounce.setSingleShot(true);
  m_debounce.setInterval(kDefaultDebounceMs);
  connect(&m_debounce, &QTimer::timeout, this, &TrainerQuery::start);
  m_timeout.setSingleShot(true);
  connect(&m_timeout, &QTimer::timeout, this, [this] {
    if (m_process == nullptr) return;
    killRunning();
    Q_EMIT failed(tr("%1 did not answer within %2 s and was stopped")
                      .arg(QFileInfo(m_program).fileName())
                      .arg(m_timeLimitMs / 1000.0),
                  -1);
  });
}

TrainerQuery::~TrainerQuery() { killRunning(); }

void TrainerQuery::setProgram(const QString& program) { m_program = program; }

void TrainerQuery::setDebounceInterval(int milliseconds) { m_debounce.setInterval(milliseconds); }

void TrainerQuery::request(const QStringList& arguments, const QByteArray& input) {
  m_arguments = arguments;
  m_input = input;
  m_pending = true;
  killRunning();  // its answer would describe an older configuration
  Q_EMIT busy();
  m_debounce.start();
}

void TrainerQuery::cancel() {
  m_pending = false;
  m_debounce.stop();
  killRunning();
}

bool TrainerQuery::isBusy() const { return m_pending || m_process != nullptr; }

void TrainerQuery::start() {
  if (!m_pending) return;
  m_pending = false;
  killRunning();
  if (m_program.isEmpty()) {
    Q_EMIT failed(tr("no trainer found (set one with --trainer or $TOKENBENCH_TRAINER)"), -1);
    return;
  }
  auto* process = new QProcess(this);
  m_process = process;
  ++m_started;
  process->setProgram(m_program);
  process->setArguments(m_arguments);
  process->setProcessChannelMode(QProcess::SeparateChannels);

  connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError error) {
    if (process != m_process || error != QProcess::FailedToStart) return;
    m_process = nullptr;
    m_timeout.stop();
    process->deleteLater();
    Q_EMIT failed(tr("cannot start %1: %2").arg(m_program, process->errorString()), -1);
  });
  connect(process, &QProcess::finished, this,
          [this, process](int exitCode, QProcess::ExitStatus status) {
            process->deleteLater();
            if (process != m_process) return;  // killed as stale
            m_process = nullptr;
            m_timeout.stop();
            const QByteArray output = process->readAllStandardOutput();
            QByteArray errors = process->readAllStandardError();
            if (errors.size() > kMaxErrorBytes) errors = errors.right(kMaxErrorBytes);
            const QString message = QString::fromUtf8(errors).trimmed();
            if (status == QProcess::CrashExit) {
              Q_EMIT failed(message.isEmpty()
                                ? tr("%1 crashed").arg(QFileInfo(m_program).fileName())
                                : message,
                            -1);
            } else if (exitCode != 0) {
              Q_EMIT failed(message.isEmpty() ? tr("%1 exited with status %2")
                                                    .arg(QFileInfo(m_program).fileName())
                                                    .arg(exitCode)
                                              : message,
                            exitCode);
            } else {
              Q_EMIT succeeded(output);
            }
          });

  process->start();
  process->write(m_input);
  process->closeWriteChannel();
  m_timeout.start(m_timeLimitMs);
}

void TrainerQuery::killRunning() {
  m_timeout.stop();
  QProcess* process = m_process;
  if (process == nullptr) return;
  m_process = nullptr;
  // finished() still arrives (and deletes it); it is ignored because it is no longer current.
  if (process->state() != QProcess::NotRunning) {
    process->kill();
  } else {
    process->deleteLater();
  }
}

}  // namespace tb::app
