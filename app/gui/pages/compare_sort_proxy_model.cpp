#include "app/gui/pages/compare_sort_proxy_model.h"

#include "app/gui/pages/compare_table_model.h"

#include <cmath>

namespace tb::app {

CompareSortProxyModel::CompareSortProxyModel(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(CompareTableModel::kSortRole);
}

bool CompareSortProxyModel::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  // Qt sorts descending by asking lessThan(right, left); answering by the order keeps a pinned
  // row last both ways.
  const bool descending = sortOrder() == Qt::DescendingOrder;
  const bool leftMean = left.data(CompareTableModel::kIsMeanRole).toBool();
  const bool rightMean = right.data(CompareTableModel::kIsMeanRole).toBool();
  if (leftMean != rightMean) return leftMean ? descending : !descending;

  const QVariant a = left.data(sortRole());
  const QVariant b = right.data(sortRole());
  if (a.typeId() == QMetaType::Double || b.typeId() == QMetaType::Double) {
    const double x = a.toDouble();
    const double y = b.toDouble();
    // Missing values (NaN) go last too.
    if (std::isnan(x) != std::isnan(y)) return std::isnan(x) ? descending : !descending;
    return x < y;
  }
  if (a.typeId() == QMetaType::Int || b.typeId() == QMetaType::Int) return a.toInt() < b.toInt();
  return QString::localeAwareCompare(a.toString(), b.toString()) < 0;
}

}  // namespace tb::app
