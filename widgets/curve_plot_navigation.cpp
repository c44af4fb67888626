// CurvePlot and the mouse: dragging pans and Ctrl+wheel zooms (the plain wheel scrolls the page
// around the plot, as over any picture); either stops the axes following the data, and a
// double click makes them follow it again.

#include "widgets/curve_plot.h"

#include "widgets/qcustomplot_no_keywords.h"
#include "widgets/wheel_filter.h"

#include <QWheelEvent>

namespace tb::widgets {

void CurvePlot::installNavigation() {
  // Once the user moves the view, stop following the data; a double click follows it again.
  connect(m_plot, &QCustomPlot::mousePress, this, [this] { followData(false); });
  connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { followData(false); });
  // The wheel scrolls the page; Ctrl+wheel zooms (eventFilter).
  m_plot->installEventFilter(this);
  connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          &CurvePlot::keepXAtOrAboveData);
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { followData(true); });
}

bool CurvePlot::followsData() const { return m_followData; }

void CurvePlot::setFollowData(bool follow) { followData(follow); }

void CurvePlot::followData(bool follow) {
  m_followData = follow;
  if (follow) {
    scheduleReplot();
  }
}

bool CurvePlot::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_plot && event->type() == QEvent::Wheel) {
    auto* wheel = static_cast<QWheelEvent*>(event);
    if (!(wheel->modifiers() & Qt::ControlModifier)) {
      scrollPageAround(this, wheel);
      return true;  // no zoom without Ctrl, scrolled or not
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace tb::widgets
