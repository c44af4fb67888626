#pragma once

#include <QHeaderView>

namespace tb::app {

/// The per-clip table's header in two levels: each tokenizer's name once, over the columns of
/// its metrics, and under it each column's metric with its direction ("PSNR \u2191").
/// A column is then as wide as its numbers, not as its tokenizer's name, so the metrics of
/// several tokenizers fit a small window; a name wider than its columns is elided (the tooltip
/// has it whole). Reads CompareTableModel's kHeaderGroupRole and kHeaderLabelRole.
class CompareHeaderView : public QHeaderView {
  Q_OBJECT

 public:
  explicit CompareHeaderView(QWidget* parent = nullptr);

  /// The tokenizer name drawn over logical section `section` ("" for Clip and Source).
  QString groupOf(int section) const;

 protected:
  void paintSection(QPainter* painter, const QRect& rect, int logicalIndex) const override;
  void paintEvent(QPaintEvent* event) override;
  QSize sectionSizeFromContents(int logicalIndex) const override;

 private:
  QString labelOf(int section) const;
};

}  // namespace tb::app
