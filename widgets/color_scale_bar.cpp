#include "widgets/color_scale_bar.h"

#include "widgets/difference_map.h"

#include <QFontMetrics>
#include <QLinearGradient>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace tb::widgets {
namespace {

constexpr int kBarWidth = 240;
constexpr int kBarHeight = 10;
constexpr int kTickCount = 5;  // 0, 1/4, 1/2, 3/4, max
constexpr int kGap = 10;

}  // namespace

ColorScaleBar::ColorScaleBar(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void ColorScaleBar::setMaximum(double maximum) {
  if (!(maximum > 0) || maximum == m_maximum) return;
  m_maximum = maximum;
  update();
}

void ColorScaleBar::setCaption(const QString& caption) {
  m_caption = caption;
  updateGeometry();
  update();
}

QSize ColorScaleBar::sizeHint() const {
  const QFontMetrics metrics(font());
  const int captionWidth = m_caption.isEmpty() ? 0 : metrics.horizontalAdvance(m_caption) + kGap;
  // Room for half of the widest tick label past each end of the bar.
  const int labelWidth = metrics.horizontalAdvance(QStringLiteral("255"));
  return {captionWidth + kBarWidth + labelWidth + 4, kBarHeight + metrics.height() + 6};
}

QSize ColorScaleBar::minimumSizeHint() const { return sizeHint(); }

void ColorScaleBar::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QFontMetrics metrics(font());
  const int labelHalf = metrics.horizontalAdvance(QStringLiteral("255")) / 2 + 2;
  int left = 0;
  if (!m_caption.isEmpty()) {
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRect(0, 0, metrics.horizontalAdvance(m_caption), kBarHeight + 2),
                     Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, m_caption);
    left = metrics.horizontalAdvance(m_caption) + kGap;
  }
  left += labelHalf;
  const int width = std::max(40, this->width() - left - labelHalf);
  const QRect bar(left, 1, width, kBarHeight);
  QLinearGradient gradient(bar.topLeft(), bar.topRight());
  for (int i = 0; i <= 16; ++i) {
    gradient.setColorAt(i / 16.0, QColor(infernoColor(i / 16.0)));
  }
  painter.fillRect(bar, gradient);
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(bar.adjusted(0, 0, -1, -1));

  painter.setPen(palette().color(QPalette::WindowText));
  for (int i = 0; i < kTickCount; ++i) {
    const double fraction = double(i) / (kTickCount - 1);
    const int x = bar.left() + static_cast<int>(fraction * (bar.width() - 1));
    painter.drawLine(x, bar.bottom() + 1, x, bar.bottom() + 3);
    const double value = fraction * m_maximum;
    const QString label = QString::number(value, 'f', value == std::floor(value) ? 0 : 1);
    const int labelWidth = metrics.horizontalAdvance(label);
    painter.drawText(x - labelWidth / 2, bar.bottom() + 4 + metrics.ascent(), label);
  }
}

}  // namespace tb::widgets
