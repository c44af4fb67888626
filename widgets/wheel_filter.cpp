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

void UnfocusedWheelFilter::keepWheelFocusOff(QWidget* input) {
  if ((input->focusPolicy() & Qt::WheelFocus) == Qt::WheelFocus) {
    input->setFocusPolicy(Qt::StrongFocus);
  }
}

bool UnfocusedWheelFilter::eventFilter(QObject* watched, QEvent* event) {
  const QEvent::Type type = event->type();
  if ((type != QEvent::Wheel && type != QEvent::Polish) || !guards(watched)) {
    return QObject::eventFilter(watched, event);
  }
  auto* input = static_cast<QWidget*>(watched);
  // A window system's wheel event focuses a WheelFocus input under the pointer before any
  // filter sees it (QApplication gives focus by policy first), after which the focused input
  // would take the wheel: the policy is changed once the input is polished, before it shows.
  keepWheelFocusOff(input);
  if (type == QEvent::Polish) return false;
  if (input->hasFocus()) return false;
  scrollPageAround(input, static_cast<QWheelEvent*>(event));
  return true;  // the value stays as it is, scrolled or not
}

}  // namespace tb::widgets
