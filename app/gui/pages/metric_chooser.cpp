#include "app/gui/pages/metric_chooser.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <array>

namespace tb::app {
namespace {

// Groups in the order a tokenizer trainer reads them; others follow alphabetically.
constexpr std::array<const char*, 4> kGroupOrder = {"train", "valid", "perf", "data"};
constexpr int kNameRole = Qt::UserRole;

int groupRank(const QString& group) {
  for (size_t i = 0; i < kGroupOrder.size(); ++i) {
    if (group == QLatin1String(kGroupOrder[i])) {
      return static_cast<int>(i);
    }
  }
  return static_cast<int>(kGroupOrder.size());
}

}  // namespace

MetricChooser::MetricChooser(QWidget* parent) : QWidget(parent) {
  m_filter = new QLineEdit(this);
  m_filter->setObjectName(QStringLiteral("metricFilter"));
  m_filter->setPlaceholderText(tr("Filter metrics"));
  m_filter->setClearButtonEnabled(true);
  connect(m_filter, &QLineEdit::textChanged, this, &MetricChooser::applyFilter);

  m_tree = new QTreeWidget(this);
  m_tree->setObjectName(QStringLiteral("metricTree"));
  m_tree->setHeaderHidden(true);
  m_tree->setRootIsDecorated(true);
  m_tree->setUniformRowHeights(true);
  m_tree->setColumnCount(1);
  connect(m_tree, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem* item, int) {
    const QString name = item->data(0, kNameRole).toString();
    if (!name.isEmpty()) {
      Q_EMIT checkedChanged(name, item->checkState(0) == Qt::Checked);
    }
  });

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(6);
  layout->addWidget(m_filter);
  layout->addWidget(m_tree, 1);
}

QString MetricChooser::groupOf(const QString& name) {
  const int slash = name.indexOf(QLatin1Char('/'));
  return slash > 0 ? name.left(slash) : QStringLiteral("other");
}

QTreeWidgetItem* MetricChooser::groupItem(const QString& group) {
  if (QTreeWidgetItem* existing = m_groups.value(group, nullptr)) {
    return existing;
  }
  const QSignalBlocker blocker(m_tree);
  auto* item = new QTreeWidgetItem;
  item->setText(0, group + QLatin1Char('/'));
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsAutoTristate);
  item->setCheckState(0, Qt::Checked);
  QFont font = item->font(0);
  font.setBold(true);
  item->setFont(0, font);
  // Insert at the group's place in the order.
  int index = 0;
  while (index < m_tree->topLevelItemCount()) {
    const QString other = m_tree->topLevelItem(index)->text(0).chopped(1);
    const int a = groupRank(group);
    const int b = groupRank(other);
    if (a < b || (a == b && group < other)) {
      break;
    }
    ++index;
  }
  m_tree->insertTopLevelItem(index, item);
  item->setExpanded(true);
  m_groups.insert(group, item);
  return item;
}

void MetricChooser::addMetric(const QString& name, bool checked) {
  if (m_items.contains(name)) {
    return;
  }
  QTreeWidgetItem* group = groupItem(groupOf(name));
  const QSignalBlocker blocker(m_tree);
  auto* item = new QTreeWidgetItem(group);
  const QString group_prefix = groupOf(name) + QLatin1Char('/');
  item->setText(0, name.startsWith(group_prefix) ? name.mid(group_prefix.size()) : name);
  item->setToolTip(0, name);
  item->setData(0, kNameRole, name);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
  item->setCheckState(0, checked ? Qt::Checked : Qt::Unchecked);
  m_items.insert(name, item);
  applyFilter();
}

QStringList MetricChooser::metrics() const {
  QStringList names;
  for (int g = 0; g < m_tree->topLevelItemCount(); ++g) {
    const QTreeWidgetItem* group = m_tree->topLevelItem(g);
    for (int i = 0; i < group->childCount(); ++i) {
      names.append(group->child(i)->data(0, kNameRole).toString());
    }
  }
  return names;
}

QStringList MetricChooser::checkedMetrics() const {
  QStringList names;
  for (const QString& name : metrics()) {
    if (isChecked(name)) {
      names.append(name);
    }
  }
  return names;
}

bool MetricChooser::isChecked(const QString& name) const {
  const QTreeWidgetItem* item = m_items.value(name, nullptr);
  return item != nullptr && item->checkState(0) == Qt::Checked;
}

bool MetricChooser::setChecked(const QString& name, bool checked) {
  QTreeWidgetItem* item = m_items.value(name, nullptr);
  if (item == nullptr) {
    return false;
  }
  item->setCheckState(0, checked ? Qt::Checked : Qt::Unchecked);  // itemChanged says the rest
  return true;
}

void MetricChooser::setFilterText(const QString& text) { m_filter->setText(text); }

void MetricChooser::clear() {
  const QSignalBlocker blocker(m_tree);
  m_tree->clear();
  m_items.clear();
  m_groups.clear();
}

void MetricChooser::applyFilter() {
  const QString text = m_filter->text().trimmed();
  for (QTreeWidgetItem* group : qAsConst(m_groups)) {
    bool anyShown = false;
    for (int i = 0; i < group->childCount(); ++i) {
      QTreeWidgetItem* item = group->child(i);
      const bool shown =
          text.isEmpty() || item->data(0, kNameRole).toString().contains(text, Qt::CaseInsensitive);
      item->setHidden(!shown);
      anyShown = anyShown || shown;
    }
    group->setHidden(!anyShown);
  }
}

}  // namespace tb::app
