#pragma once

#include "app/gui/compare_report.h"

#include <QAbstractTableModel>

#include <optional>

namespace tb::app {

/// The per-clip table of a comparison: one row per clip, then a "mean" row; columns "Clip",
/// "Source", then one per tokenizer and metric ("trained PSNR", "trained SSIM", ...), numbers
/// alone (the header says the unit; the tooltip has the value with it). Each clip's best value
/// of a metric among the tokenizers is bold. Sort with a
/// CompareSortProxyModel (numbers sort by value through kSortRole, the mean row stays last).
class CompareTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  /// The value sorted on: the metric as a double, the clip index, or the source text.
  static constexpr int kSortRole = Qt::UserRole + 1;
  /// true on the mean row.
  static constexpr int kIsMeanRole = Qt::UserRole + 2;
  /// Header roles for a two-level header (CompareHeaderView): the tokenizer a metric column
  /// belongs to ("" for Clip and Source), and the column's own label ("PSNR ↑", "Clip").
  static constexpr int kHeaderGroupRole = Qt::UserRole + 3;
  static constexpr int kHeaderLabelRole = Qt::UserRole + 4;
  /// Fixed columns before the metric columns.
  static constexpr int kClipColumn = 0;
  static constexpr int kSourceColumn = 1;
  static constexpr int kFirstMetricColumn = 2;

  explicit CompareTableModel(QObject* parent = nullptr);

  /// Shows `report` (copied); nothing for std::nullopt.
  void setReport(const std::optional<CompareReport>& report);

  /// The position in report().clips() of source row `row`; -1 for the mean row or out of range.
  int clipAt(int row) const;
  /// The source row of clip position `clip`; -1 when out of range.
  int rowOfClip(int clip) const;
  /// Tokenizer index and metric of a metric column; false for other columns.
  bool metricColumn(int column, int* tokenizer, CompareMetric* metric) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  bool isBest(int clip, int tokenizer, CompareMetric metric) const;

  std::optional<CompareReport> m_report;
  QVector<CompareMetric> m_metrics;
};

}  // namespace tb::app
