#include "widgets/elided_label.h"

#include <QEvent>
#include <QFontMetrics>
#include <QStringList>
#include <QTextLayout>
#include <QTextOption>

#include <algorithm>

namespace tb::widgets {

ElidedLabel::ElidedLabel(QWidget* parent) : ElidedLabel(QString(), parent) {}

ElidedLabel::ElidedLabel(const QString& text, QWidget* parent) : QLabel(parent) {
  setWordWrap(false);
  setTextFormat(Qt::PlainText);
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
  setFullText(text);
}

void ElidedLabel::setFullText(const QString& text) {
  if (text == m_fullText && !text.isEmpty()) return;
  const int before = fontMetrics().horizontalAdvance(m_fullText);
  m_fullText = text;
  // The size hint is the whole text: the layout asks again only when its width changed (a
  // label that follows progress changes its digits many times a second).
  if (fontMetrics().horizontalAdvance(m_fullText) != before) updateGeometry();
  elide();
}

void ElidedLabel::setMaximumLines(int lines) {
  m_maxLines = std::max(1, lines);
  updateGeometry();
  elide();
}

void ElidedLabel::setElideMode(Qt::TextElideMode mode) {
  m_mode = mode;
  elide();
}

void ElidedLabel::setMinimumTextWidth(int pixels) {
  if (pixels == m_minimumTextWidth) return;
  m_minimumTextWidth = pixels;
  updateGeometry();
}

void ElidedLabel::setFixedToolTip(const QString& toolTip) {
  m_fixedToolTip = toolTip;
  elide();
}

QSize ElidedLabel::sizeHint() const {
  const QMargins m = contentsMargins();
  const QFontMetrics metrics = fontMetrics();
  return QSize(metrics.horizontalAdvance(m_fullText) + 2 * margin() + m.left() + m.right() + 1,
               m_maxLines * metrics.lineSpacing() + 2 * margin() + m.top() + m.bottom());
}

QSize ElidedLabel::minimumSizeHint() const {
  const QMargins m = contentsMargins();
  const int text = m_minimumTextWidth >= 0
                       ? m_minimumTextWidth
                       : fontMetrics().horizontalAdvance(QStringLiteral("\u2026"));
  return QSize(std::min(text, sizeHint().width()) + 2 * margin() + m.left() + m.right(),
               sizeHint().height());
}

void ElidedLabel::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  elide();
}

void ElidedLabel::changeEvent(QEvent* event) {
  QLabel::changeEvent(event);
  if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
    updateGeometry();
    elide();
  }
}

void ElidedLabel::elide() {
  const int room = std::max(0, contentsRect().width() - 2 * margin());
  QString shown;
  if (m_maxLines > 1 && fontMetrics().horizontalAdvance(m_fullText) > room) {
    shown = wrapped(room, &m_elided);
  } else {
    shown = fontMetrics().elidedText(m_fullText, m_mode, room);
    m_elided = shown != m_fullText;
  }
  if (shown != text()) setText(shown);
  const QString tip = !m_fixedToolTip.isEmpty() ? m_fixedToolTip
                      : m_elided                ? m_fullText
                                                : QString();
  if (tip != toolTip()) setToolTip(tip);
}

// The text broken at word boundaries into lines of `width`, the last of m_maxLines elided.
QString ElidedLabel::wrapped(int width, bool* cut) const {
  QTextLayout layout(m_fullText, font());
  QTextOption option;
  option.setWrapMode(QTextOption::WordWrap);
  layout.setTextOption(option);
  QStringList lines;
  *cut = false;
  layout.beginLayout();
  for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
    line.setLineWidth(width);
    if (lines.size() + 1 == m_maxLines) {
      const QString rest = m_fullText.mid(line.textStart()).trimmed();
      lines << fontMetrics().elidedText(rest, Qt::ElideRight, width);
      *cut = lines.back() != rest;
      break;
    }
    lines << m_fullText.mid(line.textStart(), line.textLength()).trimmed();
  }
  layout.endLayout();
  return lines.join(QLatin1Char('\n'));
}

}  // namespace tb::widgets
