// Where a widget lies in its window, for the tests that check what a small screen shows.
#pragma once

#include <QPoint>
#include <QRect>
#include <QString>
#include <QWidget>

namespace tb::test {

/// `widget`'s rectangle in its window's coordinates.
inline QRect rectInWindow(const QWidget* widget) {
  return QRect(widget->mapTo(widget->window(), QPoint(0, 0)), widget->size());
}

/// What of `widget` shows: its rectangle in the window, cut by every widget around it (a
/// scroll area's viewport, a page narrower than its content) and by the window's edges.
inline QRect shownRectInWindow(const QWidget* widget) {
  QRect shown = rectInWindow(widget);
  for (const QWidget* around = widget->parentWidget(); around != nullptr && !around->isWindow();
       around = around->parentWidget()) {
    shown &= rectInWindow(around);
  }
  return shown & widget->window()->rect();
}

/// Shown, and whole: nothing of it cut by the window's edges or by the widgets around it.
inline bool insideWindow(const QWidget* widget) {
  return widget->isVisible() && shownRectInWindow(widget) == rectInWindow(widget);
}

/// "name at x,y wxh (shown wxh) in a WxH window", for failure messages.
inline QString describe(const QWidget* widget) {
  const QRect rect = rectInWindow(widget);
  const QRect shown = shownRectInWindow(widget);
  return QStringLiteral("%1 at %2,%3 %4x%5 (shown %6x%7%8) in a %9x%10 window")
      .arg(widget->objectName())
      .arg(rect.x())
      .arg(rect.y())
      .arg(rect.width())
      .arg(rect.height())
      .arg(shown.width())
      .arg(shown.height())
      .arg(widget->isVisible() ? QString() : QStringLiteral(", hidden"))
      .arg(widget->window()->width())
      .arg(widget->window()->height());
}

}  // namespace tb::test
