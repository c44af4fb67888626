#pragma once

#include "core/event_protocol.h"
#include "core/metrics_log.h"

#include <QColor>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QGridLayout;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QSlider;
class QStackedWidget;
class QTabWidget;
class QToolButton;

namespace tb::widgets {
class CodebookView;
class CurvePlot;
}  // namespace tb::widgets

namespace tb::app {

class AlertBanner;
class EmptyState;
class MetricChooser;
class RunFollower;
class RunProgressView;

/// Monitor: follows the open run directory (live or finished) and shows
///
/// - a grid of small curve plots, one per kind of metric (loss, quantizer, GAN, learning rate,
///   gradient norm, held-out PSNR over wall-clock time, SSIM/LPIPS, codebook usage, perplexity,
///   throughput, step time and data wait, skipped files, anything else), fed from metrics.jsonl;
///   training curves are smoothed (slider) with the raw values faint behind, validation metrics
///   are drawn as they are; a vertical line marks the step the discriminator starts at; a
///   horizontal line on the held-out PSNR marks the classic VQ reference codec's PSNR on the same
///   clips when the run has one (<run>/reference/reference.json);
/// - a metric chooser (check boxes grouped by train/, valid/, perf/, data/);
/// - the run's progress with its ETA, and a banner with the alerts (non-finite steps,
///   rollbacks, skipped data, errors) that also marks them on the loss plot;
/// - the Codebook tab (code-use histogram, dead codes, perplexity and usage over the run);
/// - other runs overlaid for comparison ("Overlay run…", or Overlay on Monitor on the Runs
///   page): each run in a colour of its own, with a colour key above the plots, and the metrics
///   of a plot told apart by their lines;
/// - the Configuration tab: the run's config.json (whoever started the run), and a button that
///   starts a new run from it on the Setup page.
///
/// A run that neither said `done` nor has a trainer holding its lock is shown as interrupted,
/// with an alert, as the Runs page shows it.
///
/// The x axis is the step or the training time since each run's first row (wall-clock time
/// without the stops between a stop and its resume).
class MonitorPage : public QWidget {
  Q_OBJECT

 public:
  enum class XAxis { Step, WallClock };
  /// Smoothing weight the slider starts at (TensorBoard's default).
  static constexpr double kDefaultSmoothing = 0.6;

  explicit MonitorPage(QWidget* parent = nullptr);
  ~MonitorPage() override;

  /// Follows run directory `path` ("" closes it), dropping overlays of the previous run.
  void setRunDirectory(const QString& path);
  QString runDirectory() const;
  /// Overlays the curves of another run directory; false when `path` is not a directory, is
  /// the open run or is overlaid already, or no run is open.
  bool addOverlayRun(const QString& path);
  QStringList overlayRuns() const;
  void clearOverlayRuns();
  /// The follower of the open run (index 0) or of overlay index-1; nullptr when there is none.
  RunFollower* runFollower(int index = 0) const;
  /// Asks every followed run for a read now and returns; what they find is shown when the
  /// reads are done (the followers also poll on their own timers).
  void pollNow();
  /// Runs the event loop until every follower has delivered what it was asked for, or
  /// `timeoutMs` has passed; true when all have. For tests and scripts: the window never waits.
  bool waitForReads(int timeoutMs = 10000);

  /// The "Loss" plot (train/loss, recon losses, valid/recon_loss). Owned by this page.
  widgets::CurvePlot* curvePlot() const;
  /// The plot with id `id` ("loss", "psnr", "lr", ...), or nullptr.
  widgets::CurvePlot* panel(const QString& id) const;
  /// Every panel id, in grid order.
  QStringList panelIds() const;
  /// The panels shown now (those with a checked metric that has points), in grid order.
  QStringList shownPanelIds() const;
  /// The panel id a metric is plotted in.
  static QString panelIdOfMetric(const QString& metric);
  /// The name of `metric`'s series in its plot: the metric itself for the open run,
  /// "metric · label" for an overlay.
  QString seriesName(int runIndex, const QString& metric) const;

  void setXAxis(XAxis axis);
  XAxis xAxis() const { return m_xAxis; }
  /// Smoothing weight in [0, 1) of the training curves (validation curves are never smoothed).
  void setSmoothing(double weight);
  double smoothing() const { return m_smoothing; }
  void setIgnoreOutliers(bool ignore);
  void setLogX(bool logarithmic);

  AlertBanner* alertBanner() const { return m_alerts; }
  RunProgressView* progressView() const { return m_progress; }
  widgets::CodebookView* codebookView() const { return m_codebook; }
  MetricChooser* metricChooser() const { return m_chooser; }
  /// Shows the Curves (0), the Codebook (1) or the Configuration (2) tab.
  void setCurrentTab(int index);
  /// The Configuration tab's text: the open run's config.json as it is on disk.
  QString configurationText() const;
  /// The colour of run `runIndex` (0: the open run) while runs are overlaid.
  static QColor runColor(int runIndex);

  /// True while the curves (not the empty state) are shown.
  bool isShowingPlot() const;
  /// The empty state's headline, e.g. "No run open".
  QString emptyHeadline() const;

 Q_SIGNALS:
  /// "New Run from This Configuration": the open run's config.json, for the Setup page.
  void newRunFromConfigurationRequested(const QString& configPath);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  struct Run;
  struct Panel;

  Run* addRun(const QString& path, int index);
  void connectRun(Run* run);
  void onReset(Run* run);
  void onRows(Run* run, const QVector<core::MetricsRow>& rows);
  void onEvents(Run* run, const QVector<core::Event>& events);
  void onCodebookChanged(qint64 step);
  void loadCodebookCounts(qint64 step);
  void registerMetric(const QString& metric);
  void plotMetric(int runIndex, const QString& metric, int from);
  void refeedAll();
  std::optional<double> xOf(const Run& run, const Panel& panel, std::int64_t step) const;
  bool panelUsesWallClock(const Panel& panel) const;
  Panel* panelOf(const QString& metric) const;
  int runIndexOf(const Run* run) const;
  void updateMarkers();
  void updateReferenceLine();
  void updateProgress();
  void updateGrid();
  void updateView();
  void updateRunLabels();
  void chooseOverlayRun();
  void styleSeries(Panel& panel, int runIndex, const QString& metric);
  void restyleSeries();
  bool isShown(const Panel& panel, const QString& metric) const;
  void showSeriesOf(Panel& panel);
  void updateSameValues();
  QWidget* buildConfigurationTab();
  void loadConfiguration();

  // Controls.
  QLabel* m_runName = nullptr;
  QPushButton* m_overlayButton = nullptr;
  QLabel* m_overlayLabel = nullptr;
  QToolButton* m_clearOverlaysButton = nullptr;
  QComboBox* m_xAxisChooser = nullptr;
  QSlider* m_smoothingSlider = nullptr;
  QLabel* m_smoothingValue = nullptr;
  QCheckBox* m_ignoreOutliers = nullptr;
  QCheckBox* m_logX = nullptr;
  RunProgressView* m_progress = nullptr;
  AlertBanner* m_alerts = nullptr;
  MetricChooser* m_chooser = nullptr;
  widgets::CodebookView* m_codebook = nullptr;
  QTabWidget* m_tabs = nullptr;
  QScrollArea* m_gridArea = nullptr;
  QWidget* m_gridHost = nullptr;
  QGridLayout* m_grid = nullptr;
  EmptyState* m_empty = nullptr;
  QWidget* m_content = nullptr;
  QStackedWidget* m_stack = nullptr;
  QTimer m_clock;  // refreshes "last write N ago"
  QPlainTextEdit* m_configView = nullptr;
  QPushButton* m_newRunFromConfig = nullptr;
  bool m_interruptionAlerted = false;

  std::vector<std::unique_ptr<Panel>> m_panels;
  std::vector<std::unique_ptr<Run>> m_runs;  // [0]: the open run, then overlays
  QStringList m_gridShown;
  int m_gridColumns = 0;
  XAxis m_xAxis = XAxis::Step;
  double m_smoothing = kDefaultSmoothing;
  // Alert steps marked on the loss plot: (step, code).
  QVector<QPair<qint64, QString>> m_alertMarks;
};

}  // namespace tb::app
