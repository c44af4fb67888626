#pragma once

#include <QSortFilterProxyModel>

namespace tb::app {

/// Sorts a CompareTableModel by CompareTableModel::kSortRole (numbers as numbers, missing
/// values last) and keeps the mean row at the bottom in either sort order.
class CompareSortProxyModel : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit CompareSortProxyModel(QObject* parent = nullptr);

 protected:
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

}  // namespace tb::app
