#pragma once

#include "widgets/curve_annotations.h"
#include "widgets/curve_series.h"

#include <QColor>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <memory>
#include <optional>

class QCheckBox;
class QCPGraph;
class QCPRange;
class QCustomPlot;
class QLabel;

namespace tb::widgets {

/// A line plot of named series (loss curves, learning rate, metrics) over a shared x axis
/// (the training step, or the wall-clock time since the run started), drawn with QCustomPlot.
///
/// Data changes never redraw at once: they queue one replot on a single-shot timer
/// (replotInterval(), 50 ms by default), so thousands of appends from a live run cost one
/// redraw. Points are kept sorted by x; appends that arrive in order cost no sorting, and
/// QCustomPlot's adaptive sampling draws at most a few points per pixel column (the min and max
/// of each column), so a series of a million points draws about as fast as one of a thousand.
///
/// Smoothing (setSmoothing()) is TensorBoard's debiased EMA (EmaSmoother): each series is then
/// drawn twice, the raw values faint behind the smoothed curve. The axes follow the data until
/// the user drags or zooms; a double click returns to following it. While following, the y axis
/// ignores outliers (setIgnoreOutliers(), on by default): it spans the bulk of every visible
/// series (robustValueRange()), and a lone spike is drawn but clipped at the edge. "Log x" and
/// "Log y" check boxes above the plot switch the axes between linear and logarithmic (values
/// <= 0 are not drawn on a logarithmic axis). Vertical markers (setMarker()) label steps such as
/// the start of the discriminator or a rollback.
///
/// The mouse wheel over the plot scrolls the page around it, as over any picture (TensorBoard
/// and W&B charts do the same); Ctrl+wheel zooms, dragging pans. While the data are all at
/// x >= 0 (steps, seconds), neither takes the x axis below 0.
///
/// Its files: curve_plot.cpp (the series and the legend), curve_plot_axes.cpp (scales, ticks
/// and the range that follows the data), curve_plot_navigation.cpp (the mouse); CurveSeries
/// holds one series' graphs and CurveAnnotations the markers and reference lines.
class CurvePlot : public QWidget {
  Q_OBJECT

 public:
  /// Replot delay used unless setReplotInterval() says otherwise, in milliseconds.
  static constexpr int kDefaultReplotIntervalMs = 50;
  /// Most markers one plot keeps; setMarker() refuses new ones beyond it (a run that warns at
  /// every step would otherwise bury its curves under lines).
  static constexpr int kMaxMarkers = CurveAnnotations::kMaxMarkers;

  explicit CurvePlot(QWidget* parent = nullptr);
  ~CurvePlot() override;

  /// Replaces all points of series `name`, creating the series if it is new. `xs` and `ys`
  /// must have the same length; otherwise nothing changes and false is returned.
  bool setSeries(const QString& name, const QVector<double>& xs, const QVector<double>& ys);
  /// Adds points to series `name`, creating it if new. Points may arrive in any x order (in
  /// increasing x, past the last point, is the cheap case). `xs` and `ys` must have the same
  /// length; otherwise nothing changes and false is returned.
  bool appendPoints(const QString& name, const QVector<double>& xs, const QVector<double>& ys);
  /// Adds one point (x, y) to series `name`, creating it if new.
  void appendPoint(const QString& name, double x, double y);
  /// Removes series `name`; returns false when there is no such series.
  bool removeSeries(const QString& name);
  /// Removes every series (markers stay).
  void clear();

  /// Names of the series in the order they were created.
  QStringList seriesNames() const;
  /// Number of points in series `name`, or -1 when there is no such series.
  int pointCount(const QString& name) const;

  /// Colour and dash pattern of series `name` (created empty if new). Series get colours from
  /// the Tableau 10 palette in creation order unless set here.
  void setSeriesStyle(const QString& name, const QColor& color, Qt::PenStyle style = Qt::SolidLine);
  QColor seriesColor(const QString& name) const;
  /// Shows or hides series `name` (a hidden series keeps its data, leaves the legend and does
  /// not count for the axis ranges). Returns false when there is no such series.
  bool setSeriesVisible(const QString& name, bool visible);
  bool isSeriesVisible(const QString& name) const;
  /// The text of series `name` in the legend (its name unless set here; "" returns to it).
  void setSeriesLabel(const QString& name, const QString& label);
  QString seriesLabel(const QString& name) const;
  /// Whether series `name` has a legend entry (true by default). Series whose meaning another
  /// key already gives (overlaid runs, told apart by a colour key outside the plot) leave it,
  /// so that the legend does not grow with every run.
  void setSeriesInLegend(const QString& name, bool inLegend);
  /// Entries the legend shows now.
  int legendEntryCount() const;

  /// Title shown above the plot; hidden while empty.
  void setTitle(const QString& title);
  QString title() const;
  /// Labels of the x and y axes ("step" and "value" by default).
  void setAxisLabels(const QString& xLabel, const QString& yLabel);

  /// Smoothing weight in [0, 1) (0: raw values only), meant as TensorBoard means it: for a
  /// curve of up to 1000 points; longer curves are smoothed with the weight that averages the
  /// same share of the curve (EmaSmoother::weightForPoints). Clamped to [0, 0.999].
  void setSmoothing(double weight);
  double smoothing() const;

  /// Whether the y axis, while following the data, ignores outliers (true by default).
  void setIgnoreOutliers(bool ignore);
  bool ignoresOutliers() const;

  /// Switches the y axis to a logarithmic (true) or linear (false) scale.
  void setLogY(bool logarithmic);
  bool isLogY() const;
  /// Switches the x axis to a logarithmic (true) or linear (false) scale.
  void setLogX(bool logarithmic);
  bool isLogX() const;
  /// Shows x values as a duration (seconds as h:mm:ss) instead of plain numbers.
  void setTimeAxis(bool duration);
  bool isTimeAxis() const;
  /// X values are whole numbers (training steps): ticks fall on whole numbers only, so a run of
  /// one point shows one tick, not 119.6, 119.8, ... (off by default).
  void setWholeNumberX(bool whole);

  /// Draws a vertical line at `x` in `color`, with `label` (may be empty) at its top, replacing
  /// the marker called `id` if there is one. Returns false, and draws nothing, when the plot
  /// already holds kMaxMarkers other markers.
  bool setMarker(const QString& id, double x, const QString& label, const QColor& color,
                 Qt::PenStyle style = Qt::DashLine);
  /// Removes marker `id`; false when there is none.
  bool removeMarker(const QString& id);
  /// Removes every marker whose id starts with `idPrefix` (all of them for an empty prefix).
  void clearMarkers(const QString& idPrefix = {});
  /// Ids of the markers, in no particular order.
  QStringList markerIds() const;
  /// Where marker `id` stands on the x axis, or nullopt when there is none.
  std::optional<double> markerPosition(const QString& id) const;
  /// The label of marker `id` ("" when it has none or there is no such marker).
  QString markerLabel(const QString& id) const;

  /// Draws a horizontal line at value `y` across the plot in `color`, with `label` at its right
  /// end (a figure to compare the curves with, such as a reference codec's PSNR), replacing the
  /// line called `id` if there is one. While following the data the y axis keeps it in view.
  void setReferenceLine(const QString& id, double y, const QString& label, const QColor& color);
  /// Removes reference line `id`; false when there is none.
  bool removeReferenceLine(const QString& id);
  /// Where reference line `id` stands on the y axis, or nullopt when there is none.
  std::optional<double> referenceLineValue(const QString& id) const;
  /// The label of reference line `id` ("" when there is no such line).
  QString referenceLineLabel(const QString& id) const;

  /// Whether the axes follow the data (true until the user drags or zooms).
  bool followsData() const;
  /// Follows the data again (what a double click does) or stops following it.
  void setFollowData(bool follow);

  /// Delay between the first data change and the replot it queues, in milliseconds (>= 0).
  void setReplotInterval(int milliseconds);
  int replotInterval() const;
  /// True while a data change waits for its replot.
  bool isReplotPending() const;
  /// How many replots this plot has done since it was created.
  int replotCount() const;

  /// The QCustomPlot underneath, for views that extend this one. Owned by this widget.
  QCustomPlot* customPlot() const;
  /// The graph of the raw values of series `name`, or nullptr. Owned by customPlot().
  QCPGraph* graph(const QString& name) const;
  /// The graph of the smoothed values of series `name` (empty while smoothing is 0), or nullptr.
  QCPGraph* smoothedGraph(const QString& name) const;

 public Q_SLOTS:
  /// Smooths what changed, rescales (when following the data) and redraws now, cancelling a
  /// queued replot.
  void replotNow();

 Q_SIGNALS:
  /// Emitted after every replot.
  void replotted();
  /// Emitted when the y axis changes between linear and logarithmic.
  void logYChanged(bool logarithmic);
  /// Emitted when the x axis changes between linear and logarithmic.
  void logXChanged(bool logarithmic);

 private:
  // The series (curve_plot.cpp).
  CurveSeries& seriesFor(const QString& name);
  void scheduleReplot();
  void updateLegend();
  void fitLegendAndTicks();
  int legendColumns() const;
  // Scales, ticks and the range that follows the data (curve_plot_axes.cpp).
  void fitLogTicks();
  void rescaleToData();
  // The mouse moving the view (curve_plot_navigation.cpp).
  void installNavigation();
  void followData(bool follow);
  void keepXAtOrAboveData(const QCPRange& range);
  bool eventFilter(QObject* watched, QEvent* event) override;

  QLabel* m_title = nullptr;
  QCheckBox* m_logXToggle = nullptr;
  QCheckBox* m_logYToggle = nullptr;
  QCustomPlot* m_plot = nullptr;
  QHash<QString, CurveSeries> m_series;
  QStringList m_order;
  std::unique_ptr<CurveAnnotations> m_annotations;  // markers and reference lines
  QTimer m_replotTimer;
  double m_smoothing = 0.0;
  int m_replotCount = 0;
  int m_colorIndex = 0;
  bool m_followData = true;
  bool m_ignoreOutliers = true;
  bool m_timeAxis = false;
  bool m_wholeNumberX = false;
};

}  // namespace tb::widgets
