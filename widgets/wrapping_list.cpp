#include "widgets/wrapping_list.h"

#include <QFontMetrics>
#include <QResizeEvent>
#include <QScrollBar>
#include <QStyle>

#include <algorithm>

namespace tb::widgets {
namespace {

// Room around an item's text that the style's item delegate takes (focus frame, margins).
constexpr int kItemPadding = 6;

}  // namespace

WrappingList::WrappingList(QWidget* parent) : QListWidget(parent) {
  setWordWrap(true);
  setTextElideMode(Qt::ElideNone);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
  setUniformItemSizes(false);
  setResizeMode(QListView::Adjust);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void WrappingList::setMaximumVisibleRows(int rows) {
  m_maxRows = std::max(1, rows);
  fitRows();
}

void WrappingList::fitRows() {
  const QFontMetrics metrics(font());
  const int scrollBar = style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, this);
  // The text's width: the viewport less the icon, the padding and a scroll bar that may come.
  const int iconRoom = iconSize().isValid() ? iconSize().width() + kItemPadding : 0;
  const int textWidth =
      std::max(40, width() - 2 * frameWidth() - scrollBar - iconRoom - 2 * kItemPadding);
  const int minimumRow =
      std::max(metrics.height(), iconSize().isValid() ? iconSize().height() : 0) + kItemPadding;
  const int rowWidth = textWidth + iconRoom + 2 * kItemPadding;
  int shown = 0;
  for (int row = 0; row < count(); ++row) {
    QListWidgetItem* it = item(row);
    // Fitted at this width already (an item's text does not change once listed).
    if (it->sizeHint().width() != rowWidth) {
      const QRect text =
          metrics.boundingRect(QRect(0, 0, textWidth, 1 << 20), Qt::TextWordWrap, it->text());
      it->setSizeHint(QSize(rowWidth, std::max(minimumRow, text.height() + kItemPadding)));
    }
    if (row < m_maxRows) shown += it->sizeHint().height();
  }
  m_fittedWidth = width();
  setFixedHeight(std::max(shown, minimumRow) + 2 * frameWidth());
}

void WrappingList::resizeEvent(QResizeEvent* event) {
  QListWidget::resizeEvent(event);
  if (event->size().width() != m_fittedWidth) fitRows();
}

}  // namespace tb::widgets
