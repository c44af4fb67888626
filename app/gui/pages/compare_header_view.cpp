#include "app/gui/pages/compare_header_view.h"

#include "app/gui/pages/compare_table_model.h"

#include <QPainter>
#include <QStyleOptionHeader>

namespace tb::app {

CompareHeaderView::CompareHeaderView(QWidget* parent) : QHeaderView(Qt::Horizontal, parent) {
  setSectionsClickable(true);
  setHighlightSections(false);
  setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
}

QString CompareHeaderView::groupOf(int section) const {
  return model() ? model()
                       ->headerData(section, orientation(), CompareTableModel::kHeaderGroupRole)
                       .toString()
                 : QString();
}

QString CompareHeaderView::labelOf(int section) const {
  if (!model()) return {};
  const QVariant label =
      model()->headerData(section, orientation(), CompareTableModel::kHeaderLabelRole);
  return label.isValid() ? label.toString()
                         : model()->headerData(section, orientation()).toString();
}

void CompareHeaderView::paintSection(QPainter* painter, const QRect& rect, int logicalIndex) const {
  if (!rect.isValid()) return;
  QStyleOptionHeader option;
  initStyleOptionForIndex(&option, logicalIndex);  // position, sort indicator, state
  option.text = labelOf(logicalIndex);
  option.textAlignment = Qt::AlignLeft | Qt::AlignVCenter;
  option.rect = rect;
  const QFont font = painter->font();
  if (!groupOf(logicalIndex).isEmpty()) {
    // The lower half: the metric, under its tokenizer's name (paintEvent draws the names). The
    // column is as wide as its label: the sorted one is told by its label's colour and
    // underline, not by an arrow that would take the label's room (and read as its direction).
    option.rect.setTop(rect.top() + rect.height() / 2);
    option.textAlignment = Qt::AlignRight | Qt::AlignVCenter;
    if (option.sortIndicator != QStyleOptionHeader::None) {
      option.sortIndicator = QStyleOptionHeader::None;
      option.palette.setColor(QPalette::ButtonText, palette().color(QPalette::Highlight));
      QFont underlined = font;
      underlined.setUnderline(true);
      painter->setFont(underlined);
    }
  }
  style()->drawControl(QStyle::CE_Header, &option, painter, this);
  painter->setFont(font);
}

void CompareHeaderView::paintEvent(QPaintEvent* event) {
  QHeaderView::paintEvent(event);
  if (!model()) return;
  QPainter painter(viewport());
  const int half = viewport()->height() / 2;
  // Each run of columns of one tokenizer, in visual order, gets its name once over them.
  for (int visual = 0; visual < count();) {
    const int first = logicalIndex(visual);
    const QString group = groupOf(first);
    int last = visual;
    while (last + 1 < count() && !group.isEmpty() && groupOf(logicalIndex(last + 1)) == group)
      ++last;
    if (!group.isEmpty()) {
      const int left = sectionViewportPosition(first);
      const int lastLogical = logicalIndex(last);
      const int right = sectionViewportPosition(lastLogical) + sectionSize(lastLogical);
      QStyleOptionHeader option;
      initStyleOption(&option);
      option.rect = QRect(left, 0, right - left, half);
      option.section = first;
      option.position = QStyleOptionHeader::Middle;
      option.text = fontMetrics().elidedText(group, Qt::ElideRight, option.rect.width() - 8);
      option.textAlignment = Qt::AlignHCenter | Qt::AlignVCenter;
      style()->drawControl(QStyle::CE_Header, &option, &painter, this);
    }
    visual = last + 1;
  }
}

QSize CompareHeaderView::sectionSizeFromContents(int logicalIndex) const {
  const QSize size = QHeaderView::sectionSizeFromContents(logicalIndex);
  if (groupOf(logicalIndex).isEmpty()) return size;
  // As wide as the metric's label, not as the name over the group (nor a sort indicator: see
  // paintSection).
  const int margin = style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, this);
  return {fontMetrics().horizontalAdvance(labelOf(logicalIndex)) + 4 * margin, size.height()};
}

}  // namespace tb::app
