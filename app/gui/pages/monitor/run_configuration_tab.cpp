#include "app/gui/pages/monitor/run_configuration_tab.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace tb::app {

RunConfigurationTab::RunConfigurationTab(QWidget* parent) : QWidget(parent) {
  auto* intro = new QLabel(
      tr("The run's own config.json: what it trains with, whoever started it. The Setup page "
         "holds the next run's settings."),
      this);
  intro->setWordWrap(true);
  intro->setForegroundRole(QPalette::PlaceholderText);
  m_newRun = new QPushButton(tr("New Run from This Configuration"), this);
  m_newRun->setObjectName(QStringLiteral("newRunFromConfiguration"));
  m_newRun->setToolTip(tr("Load this configuration into the Setup page, under a new run name"));
  connect(m_newRun, &QPushButton::clicked, this, &RunConfigurationTab::newRunClicked);
  m_view = new QPlainTextEdit(this);
  m_view->setObjectName(QStringLiteral("runConfiguration"));
  m_view->setReadOnly(true);
  m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto* row = new QHBoxLayout;
  row->addWidget(intro, 1);
  row->addWidget(m_newRun);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 8, 0, 0);
  layout->addLayout(row);
  layout->addWidget(m_view, 1);
}

void RunConfigurationTab::showConfiguration(const QString& text, bool canStartRun) {
  if (m_view->toPlainText() != text) m_view->setPlainText(text);
  m_newRun->setEnabled(canStartRun);
}

QString RunConfigurationTab::text() const { return m_view->toPlainText(); }

}  // namespace tb::app
