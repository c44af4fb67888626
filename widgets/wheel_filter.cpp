#include "widgets/wheel_filter.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QScrollBar>
#include <QWheelEvent>

#include <cstdlib>

namespace tb::widgets {

bool scrollPageAround(QWidget* widget, QWheelEvent* event) {
  for (QWidget* up = widget == nullptr ? nullptr : widget->parentWidget(); up != nullptr;
       up = up->parentWidget()) {
    auto* area = qobject_cast<QAbstractScrollArea*>(up);
    if (area == nullptr) continue;
    // The area scrolls with the bar of the wheel's direction; one that cannot scroll that way
    // lets an outer page have the wheel.
    const bool vertical = std::abs(event->angleDelta().y()) >= std::abs(event->angleDelta().x());
    QScrollBar* bar = vertical ? area->verticalScrollBar() : area->horizontalScrollBar();
    if (bar == nullptr || bar->maximum() <= bar->minimum()) continue;
    QWheelEvent copy(event->position(), event->globalPosition(), event->pixelDelta(),
                     event->angleDelta(), event->buttons(), event->modifiers(), event->phase(),
                     event->inverted(), event->source());
    QCoreApplication::sendEvent(bar, &copy);
    return true;
  }
  return false;
}

bool UnfocusedWheelFilter::guards(const QObject* object) {
  // A slider that is part of a scroll bar is the scrolling itself.
  return qobject_cast<const QAbstractSpinBox*>(object) != nullptr ||
         qobject_cast<const QComboBox*>(object) != nullptr ||
         (qobject_cast<const QAbstractSlider*>(object) != nullptr &&
          qobject_cast<const QScrollBar*>(object) == nullptr);
}

bool UnfocusedWheelFilter::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::Wheel || !guards(watched)) {
    return QObject::eventFilter(watched, event);
  }
  auto* input = static_cast<QWidget*>(watched);
  if (input->focusPolicy() == Qt::WheelFocus) input->setFocusPolicy(Qt::StrongFocus);
  if (input->hasFocus()) return false;
  scrollPageAround(input, static_cast<QWheelEvent*>(event));
  return true;  // the value stays as it is, scrolled or not
}

}  // namespace tb::widgets
