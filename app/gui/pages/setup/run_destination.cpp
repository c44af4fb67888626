#include "app/gui/pages/setup/run_destination.h"

#include "app/control/wire_text.h"

#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>

#include <utility>

namespace tb::app {

RunDestination::RunDestination(QWidget* parent) : QWidget(parent) {
  m_runsFolder = new QLineEdit(this);
  m_runsFolder->setObjectName(QStringLiteral("runsFolder"));
  m_runsFolder->setText(QDir::current().absoluteFilePath(QStringLiteral("runs")));
  m_runsFolder->setToolTip(tr("Folder that holds run directories"));
  auto* browseRuns = new QToolButton(this);
  browseRuns->setText(tr("Browse\u2026"));
  connect(browseRuns, &QToolButton::clicked, this, &RunDestination::chooseRunsFolder);
  m_runName = new QLineEdit(this);
  m_runName->setObjectName(QStringLiteral("runName"));
  m_runName->setToolTip(tr("Name of the run directory inside the runs folder"));
  m_runName->setMinimumWidth(220);
  connect(m_runsFolder, &QLineEdit::textEdited, this, &RunDestination::edited);
  connect(m_runName, &QLineEdit::textEdited, this, [this] {
    m_nameAuto = false;
    Q_EMIT edited();
  });

  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(8);
  row->addWidget(m_runsFolder, 2);
  row->addWidget(browseRuns);
  row->addSpacing(12);
  row->addWidget(new QLabel(tr("Run name:"), this));
  row->addWidget(m_runName, 1);
}

void RunDestination::setNameBase(std::function<QString()> base) { m_nameBase = std::move(base); }

QString RunDestination::runDirectory() const {
  const QString folder = m_runsFolder->text().trimmed();
  const QString name = m_runName->text().trimmed();
  return QDir::cleanPath(QDir::current().absoluteFilePath(QDir(folder).filePath(name)));
}

QStringList RunDestination::problems() const {
  QStringList problems;
  const QString name = m_runName->text().trimmed();
  if (m_runsFolder->text().trimmed().isEmpty()) problems << tr("the runs folder is empty");
  if (name.isEmpty()) {
    problems << tr("the run name is empty");
  } else if (name.contains(QLatin1Char('/')) || name == QLatin1String(".") ||
             name == QLatin1String("..")) {
    problems << tr("the run name must be a plain folder name, got \"%1\"").arg(name);
  } else if (QFileInfo::exists(pathText(runDirectoryAt(runDirectory()).configFile()))) {
    problems << tr("%1 already holds a run (config.json): choose another name, or resume that "
                   "run from the Runs page")
                    .arg(runDirectory());
  }
  return problems;
}

void RunDestination::suggestName() {
  if (!m_nameAuto) return;
  QString base = m_nameBase ? m_nameBase() : QString();
  if (base.isEmpty()) base = QStringLiteral("run");
  const QString stem = base + QLatin1Char('-') +
                       QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
  // Two runs started within a second get -2, -3, ...
  const QDir runs(QDir::current().absoluteFilePath(m_runsFolder->text().trimmed()));
  QString name = stem;
  for (int n = 2; runs.exists(name) || name == m_runName->text(); ++n) {
    name = stem + QLatin1Char('-') + QString::number(n);
  }
  m_runName->setText(name);
}

void RunDestination::placeBeside(const QString& path) {
  const QFileInfo info(QDir::cleanPath(path));
  const bool launchedFromHere = info.absoluteFilePath() == runDirectory();
  m_runsFolder->setText(QDir::toNativeSeparators(info.absolutePath()));
  if (launchedFromHere ||
      QFileInfo::exists(pathText(runDirectoryAt(info.absoluteFilePath()).configFile()))) {
    // A run (just launched from this page, or opened to watch it): the next run goes beside
    // it under a fresh name, never into it.
    if (launchedFromHere || m_runName->text().trimmed().isEmpty() ||
        m_runName->text() == info.fileName()) {
      m_nameAuto = true;
      suggestName();
    }
  } else {
    m_runName->setText(info.fileName());
    m_nameAuto = false;
  }
}

void RunDestination::focusName() {
  m_runName->setFocus(Qt::OtherFocusReason);
  m_runName->selectAll();
}

void RunDestination::chooseRunsFolder() {
  const QString folder =
      QFileDialog::getExistingDirectory(this, tr("Runs folder"), m_runsFolder->text());
  if (folder.isEmpty()) return;
  m_runsFolder->setText(folder);
  Q_EMIT edited();
}

}  // namespace tb::app
