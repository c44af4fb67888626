#include "app/pages/runs_page.h"

#include "app/pages/empty_state.h"
#include "app/pages/page_header.h"

#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace tb::app {
namespace {

constexpr int kPathRole = Qt::UserRole;

}  // namespace

RunsPage::RunsPage(QWidget* parent) : QWidget(parent) {
  auto* header = new PageHeader(tr("Runs"),
                                tr("Run directories open in this window, live or finished."), this);

  m_list = new QTreeWidget(this);
  m_list->setObjectName(QStringLiteral("runList"));
  m_list->setHeaderLabels({tr("Name"), tr("Location")});
  m_list->setRootIsDecorated(false);
  m_list->setUniformRowHeights(true);
  m_list->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);

  m_empty = new EmptyState(
      tr("No run directories open"),
      tr("Open one with File \u25b8 Open Run Directory\u2026 or start tokenbench with "
         "--run-dir DIR."),
      this);

  m_stack = new QStackedWidget(this);
  m_stack->addWidget(m_empty);
  m_stack->addWidget(m_list);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->addWidget(header);
  layout->addWidget(m_stack, 1);
}

bool RunsPage::addRunDirectory(const QString& path) {
  if (runDirectories().contains(path)) {
    return false;
  }
  auto* item = new QTreeWidgetItem(m_list);
  item->setText(0, QFileInfo(path).fileName());
  item->setText(1, QDir::toNativeSeparators(path));
  item->setData(0, kPathRole, path);
  m_stack->setCurrentWidget(m_list);
  return true;
}

QStringList RunsPage::runDirectories() const {
  QStringList paths;
  for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
    paths.append(m_list->topLevelItem(i)->data(0, kPathRole).toString());
  }
  return paths;
}

}  // namespace tb::app
