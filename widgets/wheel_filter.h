#pragma once

#include <QObject>

class QWheelEvent;
class QWidget;

namespace tb::widgets {

/// Sends `event` to the nearest scroll area around `widget` (the page that scrolls), as if the
/// wheel had turned over the page itself. Returns false when `widget` sits in no scroll area.
bool scrollPageAround(QWidget* widget, QWheelEvent* event);

/// An application-wide event filter that keeps the mouse wheel for scrolling: a wheel turned
/// over a spin box, combo box or slider that does not have keyboard focus scrolls the page
/// around it instead of changing the value (the input still takes the wheel once clicked or
/// tabbed into). Inputs that wheel-focus by default are given Qt::StrongFocus when they are
/// polished (before they first show), so a wheel never focuses them either: install with
/// QCoreApplication::installEventFilter() before the inputs are shown.
class UnfocusedWheelFilter : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;

  /// True for the inputs this filter guards (spin boxes, combo boxes, sliders).
  static bool guards(const QObject* object);
  /// Gives `input` Qt::StrongFocus if its policy includes Qt::WheelFocus.
  static void keepWheelFocusOff(QWidget* input);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace tb::widgets
