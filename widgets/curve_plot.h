#pragma once

#include <QHash>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

class QCheckBox;
class QCPGraph;
class QCustomPlot;
class QLabel;

namespace tb::widgets {

/// A line plot of named series (loss curves, learning rate, metrics) over a shared x axis
/// (usually the training step), drawn with QCustomPlot.
///
/// Data changes never redraw at once: they queue one replot on a single-shot timer
/// (replotInterval(), 50 ms by default), so thousands of appends from a live run cost one
/// redraw. The axes follow the data until the user drags or zooms; a double click returns to
/// following the data. A "Log scale" check box above the plot switches the y axis between
/// linear and logarithmic (values <= 0 are not drawn on a logarithmic axis).
class CurvePlot : public QWidget {
  Q_OBJECT

 public:
  /// Replot delay used unless setReplotInterval() says otherwise, in milliseconds.
  static constexpr int kDefaultReplotIntervalMs = 50;

  explicit CurvePlot(QWidget* parent = nullptr);
  ~CurvePlot() override;

  /// Replaces all points of series `name`, creating the series if it is new. `xs` and `ys`
  /// must have the same length; otherwise nothing changes and false is returned.
  bool setSeries(const QString& name, const QVector<double>& xs, const QVector<double>& ys);
  /// Adds points to series `name`, creating it if new. Points may arrive in any x order.
  /// `xs` and `ys` must have the same length; otherwise nothing changes and false is returned.
  bool appendPoints(const QString& name, const QVector<double>& xs, const QVector<double>& ys);
  /// Adds one point (x, y) to series `name`, creating it if new.
  void appendPoint(const QString& name, double x, double y);
  /// Removes series `name`; returns false when there is no such series.
  bool removeSeries(const QString& name);
  /// Removes every series.
  void clear();

  /// Names of the series in the order they were created.
  QStringList seriesNames() const;
  /// Number of points in series `name`, or -1 when there is no such series.
  int pointCount(const QString& name) const;

  /// Title shown above the plot; hidden while empty.
  void setTitle(const QString& title);
  QString title() const;
  /// Labels of the x and y axes ("step" and "value" by default).
  void setAxisLabels(const QString& xLabel, const QString& yLabel);

  /// Switches the y axis to a logarithmic (true) or linear (false) scale.
  void setLogY(bool logarithmic);
  bool isLogY() const;

  /// Delay between the first data change and the replot it queues, in milliseconds (>= 0).
  void setReplotInterval(int milliseconds);
  int replotInterval() const;
  /// True while a data change waits for its replot.
  bool isReplotPending() const;
  /// How many replots this plot has done since it was created.
  int replotCount() const;

  /// The QCustomPlot underneath, for views that extend this one. Owned by this widget.
  QCustomPlot* customPlot() const;
  /// The graph of series `name`, or nullptr. Owned by customPlot().
  QCPGraph* graph(const QString& name) const;

 public Q_SLOTS:
  /// Rescales (when following the data) and redraws now, cancelling a queued replot.
  void replotNow();

 Q_SIGNALS:
  /// Emitted after every replot.
  void replotted();
  /// Emitted when the y axis changes between linear and logarithmic.
  void logYChanged(bool logarithmic);

 private:
  QCPGraph* graphFor(const QString& name);
  void scheduleReplot();
  void updateLegend();
  void followData(bool follow);

  QLabel* m_title = nullptr;
  QCheckBox* m_logYToggle = nullptr;
  QCustomPlot* m_plot = nullptr;
  QHash<QString, QCPGraph*> m_graphs;
  QStringList m_order;
  QTimer m_replotTimer;
  int m_replotCount = 0;
  int m_colorIndex = 0;
  bool m_followData = true;
};

}  // namespace tb::widgets
