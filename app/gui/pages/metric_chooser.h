#pragma once

#include <QHash>
#include <QString>
#include <QStringList>
#include <QWidget>

class QLineEdit;
class QTreeWidget;
class QTreeWidgetItem;

namespace tb::app {

/// The list of a run's metrics with a check box each, grouped by their prefix (train/, valid/,
/// perf/, data/, then any other), with a filter field. A group's check box switches all of its
/// metrics. New metrics arrive checked.
class MetricChooser : public QWidget {
  Q_OBJECT

 public:
  explicit MetricChooser(QWidget* parent = nullptr);

  /// Adds `name` (no effect when it is listed already), checked unless `checked` says otherwise.
  void addMetric(const QString& name, bool checked = true);
  /// Every metric listed, in list order.
  QStringList metrics() const;
  /// The checked ones.
  QStringList checkedMetrics() const;
  bool isChecked(const QString& name) const;
  /// Checks or unchecks `name`; false when it is not listed.
  bool setChecked(const QString& name, bool checked);
  /// Shows only the metrics whose name contains `text` (case-insensitive).
  void setFilterText(const QString& text);
  void clear();

  /// The group a metric is listed under: the text before the first '/', or "other".
  static QString groupOf(const QString& name);

 Q_SIGNALS:
  /// A metric was checked or unchecked (by the user or setChecked()).
  void checkedChanged(const QString& name, bool checked);

 private:
  QTreeWidgetItem* groupItem(const QString& group);
  void applyFilter();

  QLineEdit* m_filter = nullptr;
  QTreeWidget* m_tree = nullptr;
  QHash<QString, QTreeWidgetItem*> m_items;
  QHash<QString, QTreeWidgetItem*> m_groups;
};

}  // namespace tb::app
