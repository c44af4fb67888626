#include "app/gui/pages/compare_entry_list.h"

#include <QDir>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <functional>

namespace tb::app {
namespace {

constexpr int kNameColumn = 0;
constexpr int kPathColumn = 1;
// On the name item: what an automatic name is made from, and whether the user typed the name.
constexpr int kBaseRole = Qt::UserRole;
constexpr int kUserNamedRole = Qt::UserRole + 1;
// On the path item: the path, and whether the row belongs to the open run.
constexpr int kPathRole = Qt::UserRole;
constexpr int kOpenRunRole = Qt::UserRole + 2;

}  // namespace

CompareEntryList::CompareEntryList(QWidget* parent) : QWidget(parent) {
  m_table = new QTableWidget(0, 2, this);
  m_table->setObjectName(QStringLiteral("compareEntries"));
  m_table->setHorizontalHeaderLabels({tr("Name"), tr("Folder")});
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  m_table->verticalHeader()->hide();
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setWordWrap(false);
  m_table->setTextElideMode(Qt::ElideMiddle);
  m_table->setMinimumHeight(110);
  m_table->setMaximumHeight(150);
  m_table->setToolTip(
      tr("Names head the panels of the review, in this order (Alt+Up / Alt+Down move the "
         "selected tokenizer); a run directory means its latest checkpoint (EMA weights when it "
         "has them)"));
  m_table->installEventFilter(this);
  connect(m_table, &QTableWidget::cellChanged, this, &CompareEntryList::onItemChanged);
  connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &CompareEntryList::updateButtons);
  connect(m_table->selectionModel(), &QItemSelectionModel::currentChanged, this,
          &CompareEntryList::updateButtons);

  m_add = new QPushButton(tr("Add Folder\u2026"), this);
  m_add->setObjectName(QStringLiteral("addCompareEntry"));
  connect(m_add, &QPushButton::clicked, this, &CompareEntryList::addFolderRequested);
  m_remove = new QPushButton(tr("Remove"), this);
  m_remove->setObjectName(QStringLiteral("removeCompareEntry"));
  m_remove->setToolTip(tr("Remove the selected tokenizers (Delete)"));
  connect(m_remove, &QPushButton::clicked, this, &CompareEntryList::removeSelected);
  m_up = new QToolButton(this);
  m_up->setObjectName(QStringLiteral("moveCompareEntryUp"));
  m_up->setArrowType(Qt::UpArrow);
  m_up->setAccessibleName(tr("Move Up"));
  m_up->setToolTip(tr("Move the selected tokenizer up (Alt+Up): the review shows them in order"));
  connect(m_up, &QToolButton::clicked, this, [this] { moveCurrent(-1); });
  m_down = new QToolButton(this);
  m_down->setObjectName(QStringLiteral("moveCompareEntryDown"));
  m_down->setArrowType(Qt::DownArrow);
  m_down->setAccessibleName(tr("Move Down"));
  m_down->setToolTip(
      tr("Move the selected tokenizer down (Alt+Down): the review shows them in order"));
  connect(m_down, &QToolButton::clicked, this, [this] { moveCurrent(1); });

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_add);
  buttons->addWidget(m_remove);
  buttons->addStretch(1);
  buttons->addWidget(m_up);
  buttons->addWidget(m_down);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(8);
  layout->addWidget(m_table);
  layout->addLayout(buttons);
  updateButtons();
}

void CompareEntryList::addEntry(const QString& path, const QString& name) {
  insertEntry(m_table->rowCount(), path, name, !name.isEmpty(), false);
}

void CompareEntryList::setOpenRun(const QString& run) {
  {
    const QSignalBlocker block(m_table);
    for (int row = m_table->rowCount() - 1; row >= 0; --row) {
      if (m_table->item(row, kPathColumn)->data(kOpenRunRole).toBool()) m_table->removeRow(row);
    }
  }
  if (!run.isEmpty() && !contains(run)) {
    insertEntry(0, run, {}, false, true);
  } else {
    updateNames();
    updateButtons();
    Q_EMIT changed();
  }
}

void CompareEntryList::addOpenRunEntry(const QString& path, const QString& base) {
  if (contains(path)) return;
  // Under the open run's rows (they lead the list unless the user moved them).
  int row = 0;
  while (row < m_table->rowCount() && m_table->item(row, kPathColumn)->data(kOpenRunRole).toBool())
    ++row;
  insertEntry(row, path, base, false, true);
}

void CompareEntryList::insertEntry(int row, const QString& path, const QString& name,
                                   bool userNamed, bool ofOpenRun) {
  {
    const QSignalBlocker block(m_table);
    m_table->insertRow(row);
    auto* nameItem = new QTableWidgetItem;
    // An automatic name is made from the folder's name, or from the base given.
    nameItem->setData(kBaseRole, name.isEmpty() ? path : name);
    nameItem->setData(kUserNamedRole, userNamed);
    if (userNamed) nameItem->setText(name);
    m_table->setItem(row, kNameColumn, nameItem);
    auto* pathItem = new QTableWidgetItem(QDir::toNativeSeparators(path));
    pathItem->setToolTip(QDir::toNativeSeparators(path));
    pathItem->setData(kPathRole, path);
    pathItem->setData(kOpenRunRole, ofOpenRun);
    pathItem->setFlags(pathItem->flags() & ~Qt::ItemIsEditable);
    m_table->setItem(row, kPathColumn, pathItem);
  }
  updateNames();
  m_table->resizeColumnToContents(kNameColumn);
  updateButtons();
  Q_EMIT changed();
}

QVector<CompareEntry> CompareEntryList::entries() const {
  QVector<CompareEntry> out;
  for (int row = 0; row < m_table->rowCount(); ++row) {
    out.append({m_table->item(row, kNameColumn)->text().trimmed(),
                m_table->item(row, kPathColumn)->data(kPathRole).toString()});
  }
  return out;
}

bool CompareEntryList::contains(const QString& path) const {
  const QString clean = QDir::cleanPath(path);
  for (const CompareEntry& e : entries()) {
    if (QDir::cleanPath(e.path) == clean) return true;
  }
  return false;
}

bool CompareEntryList::moveCurrent(int delta) {
  const int from = m_table->currentRow();
  const int to = from + delta;
  if (from < 0 || to < 0 || to >= m_table->rowCount()) return false;
  {
    const QSignalBlocker block(m_table);
    for (int column : {kNameColumn, kPathColumn}) {
      QTableWidgetItem* moving = m_table->takeItem(from, column);
      QTableWidgetItem* other = m_table->takeItem(to, column);
      m_table->setItem(from, column, other);
      m_table->setItem(to, column, moving);
    }
  }
  m_table->setCurrentCell(to,
                          m_table->currentColumn() < 0 ? kNameColumn : m_table->currentColumn());
  m_table->selectRow(to);
  updateNames();  // the first of two equal names keeps it bare
  updateButtons();
  Q_EMIT changed();
  return true;
}

void CompareEntryList::removeSelected() {
  QList<int> rows;
  for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) rows << index.row();
  if (rows.isEmpty()) return;
  std::sort(rows.begin(), rows.end(), std::greater<>());
  {
    const QSignalBlocker block(m_table);
    for (int row : rows) m_table->removeRow(row);
  }
  updateNames();
  updateButtons();
  Q_EMIT changed();
}

bool CompareEntryList::eventFilter(QObject* watched, QEvent* event) {
  // While a name is edited, its editor has the keys: Alt+Up there is the editor's.
  if (watched == m_table && event->type() == QEvent::KeyPress) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->modifiers() == Qt::AltModifier &&
        (key->key() == Qt::Key_Up || key->key() == Qt::Key_Down)) {
      moveCurrent(key->key() == Qt::Key_Up ? -1 : 1);
      return true;
    }
    if (key->key() == Qt::Key_Delete && key->modifiers() == Qt::NoModifier) {
      removeSelected();
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

void CompareEntryList::onItemChanged(int row, int column) {
  if (column != kNameColumn) return;
  QTableWidgetItem* item = m_table->item(row, kNameColumn);
  // A name typed by the user is theirs; emptied, the row is named after its folder again.
  item->setData(kUserNamedRole, !item->text().trimmed().isEmpty());
  updateNames();
  Q_EMIT changed();
}

void CompareEntryList::updateNames() {
  // The user's names first, as they are; then the others in list order, each kept apart from
  // every name before it.
  QStringList taken;
  for (int row = 0; row < m_table->rowCount(); ++row) {
    const QTableWidgetItem* item = m_table->item(row, kNameColumn);
    if (item->data(kUserNamedRole).toBool()) taken << item->text().trimmed();
  }
  const QSignalBlocker block(m_table);
  for (int row = 0; row < m_table->rowCount(); ++row) {
    QTableWidgetItem* item = m_table->item(row, kNameColumn);
    if (item->data(kUserNamedRole).toBool()) continue;
    const QString name = compareEntryName(item->data(kBaseRole).toString(), taken);
    item->setText(name);
    taken << name;
  }
}

void CompareEntryList::updateButtons() {
  const int row = m_table->currentRow();
  const bool selected = m_table->selectionModel()->hasSelection();
  m_remove->setEnabled(selected);
  m_up->setEnabled(selected && row > 0);
  m_down->setEnabled(selected && row >= 0 && row + 1 < m_table->rowCount());
}

}  // namespace tb::app
