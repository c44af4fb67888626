#pragma once

#include <QWidget>

class QStackedWidget;

namespace tb::widgets {
class CurvePlot;
}

namespace tb::app {

class EmptyState;

/// Monitor: the loss curves and metrics of the open run. Shows an empty state ("No run open")
/// until its plot holds at least one series, then the plot.
class MonitorPage : public QWidget {
  Q_OBJECT

 public:
  explicit MonitorPage(QWidget* parent = nullptr);

  /// The plot the run's curves go into. Owned by this page.
  widgets::CurvePlot* curvePlot() const;
  /// The run whose curves this page is for ("" for none); updates the empty state's text.
  void setRunDirectory(const QString& path);

  /// True while the plot (not the empty state) is shown.
  bool isShowingPlot() const;
  /// The empty state's headline, e.g. "No run open".
  QString emptyHeadline() const;

 private:
  void updateView();

  widgets::CurvePlot* m_plot = nullptr;
  EmptyState* m_empty = nullptr;
  QStackedWidget* m_stack = nullptr;
};

}  // namespace tb::app
