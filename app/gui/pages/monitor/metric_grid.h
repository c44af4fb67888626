#pragma once

#include "app/control/run_metrics.h"
#include "core/metric_panels.h"

#include <QHash>
#include <QScrollArea>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QGridLayout;

namespace tb::widgets {
class CurvePlot;
}

namespace tb::app {

class FollowedRuns;

/// The Monitor's curves: one small CurvePlot per kind of metric (core::metricPanels(): loss,
/// quantizer, GAN, learning rate, ...), in as many columns as the width fits, each shown while
/// it has a checked metric with points.
///
/// Draws the metrics of every followed run. One run: metric i of a panel gets colour i. Runs
/// overlaid: run i gets colour i in every panel (TensorBoard and W&B give each run one colour),
/// and the metrics of a panel are told apart by the line. A metric whose values repeat another's
/// of the same panel (train/recon_l1 when the reconstruction loss is L1) is drawn once, labelled
/// with both. The x axis is the step or the training time since each run's first row; panels
/// whose metric is over time (held-out PSNR) are over time either way.
class MetricGrid : public QScrollArea {
  Q_OBJECT

 public:
  struct Panel {
    core::MetricPanel spec;
    widgets::CurvePlot* plot = nullptr;
    QStringList metrics;  // in order of arrival: the index picks the colour or line
    // A metric whose values are another's of the same panel -> the metric it repeats.
    QHash<QString, QString> sameAs;
  };

  /// Draws the runs of `runs` (which must outlive the grid); smoothed panels start at
  /// `smoothing`.
  MetricGrid(const FollowedRuns& runs, double smoothing, QWidget* parent = nullptr);
  ~MetricGrid() override;

  // -- Panels ------------------------------------------------------------------------------------

  /// The plot with id `id` ("loss", "psnr", "lr", ...), or nullptr.
  widgets::CurvePlot* plot(const QString& id) const;
  /// Every panel id, in grid order.
  QStringList panelIds() const;
  /// The panels shown now, in grid order.
  QStringList shownPanelIds() const { return m_shown; }
  /// The panel `metric` is plotted in, or nullptr.
  Panel* panelOf(const QString& metric) const;
  /// The id of the panel `metric` is plotted in.
  static QString panelIdOfMetric(const QString& metric);

  // -- Series ------------------------------------------------------------------------------------

  /// Which metrics are drawn (the metric chooser's check boxes).
  void setMetricFilter(std::function<bool(const QString&)> isChecked);
  /// A metric seen for the first time: it takes the next colour or line of its panel.
  void addMetric(const QString& metric);
  /// Draws the points of `metric` of run `runIndex` from point `from` on (0: all of them,
  /// replacing what was drawn). False when the run has no such metric or no panel takes it.
  bool plotMetric(int runIndex, const QString& metric, int from);
  /// The rFID / rFVD panel's title with the open run's N (eval/rfid_samples, eval/rfvd_samples).
  void retitleFrechet(const RunMetrics& metrics);
  /// Removes the series of every metric of run `runIndex`.
  void removeSeriesOf(int runIndex);
  /// Styles every series again (the colours mean metrics with one run, runs with several).
  void restyleSeries();
  /// Shows or hides the series of the panel of `metric` as the metric filter says.
  void showSeriesOf(const QString& metric);
  /// Finds, in the open run, metrics that repeat another of their panel, and draws them once.
  void updateRepeats();
  /// Removes every series and marker, and forgets the metrics seen.
  void clear();
  /// Removes every marker and forgets the repeats (the open run's files started over).
  void clearMarkersAndRepeats();

  // -- Axes and view -----------------------------------------------------------------------------

  /// The x axis of every panel: training time since the start (true) or the step.
  void setWallClock(bool wallClock);
  bool wallClock() const { return m_wallClock; }
  /// Where `step` of a run with `metrics` lies on `panel`'s x axis (nullopt when the run's rows
  /// do not tell when it was).
  std::optional<double> xAt(const Panel& panel, const RunMetrics& metrics, std::int64_t step) const;
  /// Smoothing weight of the training curves (validation curves are never smoothed).
  void setSmoothing(double weight);
  double smoothing() const { return m_smoothing; }
  void setIgnoreOutliers(bool ignore);
  void setLogX(bool logarithmic);
  /// A vertical line on every panel at the step the discriminator starts at (labelled on the
  /// loss and GAN panels); none for nullopt.
  void markDiscriminatorStart(const RunMetrics& metrics, std::optional<std::int64_t> step);

  /// Lays the shown panels out again (after series changed, or the width did).
  void updateLayout();

 Q_SIGNALS:
  /// A panel replotted.
  void replotted();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  bool usesWallClock(const Panel& panel) const;
  void styleSeries(Panel& panel, int runIndex, const QString& metric);
  bool isShown(const Panel& panel, const QString& metric) const;
  void showSeriesOf(Panel& panel);

  const FollowedRuns& m_runs;
  std::function<bool(const QString&)> m_isChecked;
  QGridLayout* m_grid = nullptr;
  std::vector<std::unique_ptr<Panel>> m_panels;
  QStringList m_shown;
  int m_columns = 0;
  bool m_wallClock = false;
  double m_smoothing = 0.0;
};

}  // namespace tb::app
