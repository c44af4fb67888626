#pragma once

#include "core/event_protocol.h"
#include "core/metrics_log.h"

#include <QColor>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

class QLabel;
class QPushButton;
class QStackedWidget;
class QTabWidget;

namespace tb::widgets {
class CodebookView;
class CurvePlot;
}  // namespace tb::widgets

namespace tb::app {

class AlertBanner;
class CurveViewControls;
class EmptyState;
class FollowedRuns;
class MetricChooser;
class MetricGrid;
class OverlayKey;
class RunAlerts;
class RunConfigurationTab;
class RunFollower;
class RunProgressView;
struct FollowedRun;

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
///
/// The parts: FollowedRuns (the open run and the overlays, with their followers), MetricGrid
/// (the plots), RunAlerts (banner lines and marked steps), CurveViewControls, OverlayKey and
/// RunConfigurationTab; this class puts them together and passes what the runs' files say to
/// them.
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
  XAxis xAxis() const;
  /// Smoothing weight in [0, 1) of the training curves (validation curves are never smoothed).
  void setSmoothing(double weight);
  double smoothing() const;
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

 private:
  QLayout* buildRunLine();
  QTabWidget* buildTabs();
  QWidget* buildContent();
  void connectParts();

  // What the followed runs' files say (monitor_page_runs.cpp).
  void onReset(FollowedRun* run);
  void onRows(FollowedRun* run, const QVector<core::MetricsRow>& rows);
  void onEvents(FollowedRun* run, const QVector<core::Event>& events);
  void onCodebookChanged(qint64 step);
  void onCodebookRead(qint64 step, const QVector<qint64>& counts, const QString& error);
  void loadCodebookCounts(qint64 step);
  void plotMetric(int runIndex, const QString& metric, int from);
  void plotCodebookCurve(const QString& metric, int from);
  void refeedAll();
  void updateMarkers();
  void updateReferenceLine();
  void updateProgress();
  void loadConfiguration();

  void updateView();
  /// What the empty state says of the open run: waiting for its first row, or that it ended
  /// before writing one.
  void updateEmptyState();
  void updateRunLabels();
  void chooseOverlayRun();

  FollowedRuns* m_runs = nullptr;  // [0]: the open run, then overlays
  // Controls.
  QLabel* m_runName = nullptr;
  QPushButton* m_overlayButton = nullptr;
  RunProgressView* m_progress = nullptr;
  AlertBanner* m_alerts = nullptr;
  RunAlerts* m_runAlerts = nullptr;
  CurveViewControls* m_controls = nullptr;
  OverlayKey* m_overlayKey = nullptr;
  MetricGrid* m_grid = nullptr;
  widgets::CodebookView* m_codebook = nullptr;
  RunConfigurationTab* m_configuration = nullptr;
  QTabWidget* m_tabs = nullptr;
  MetricChooser* m_chooser = nullptr;
  EmptyState* m_empty = nullptr;
  QWidget* m_content = nullptr;
  QStackedWidget* m_stack = nullptr;
  QTimer m_clock;  // refreshes "last write N ago"
};

}  // namespace tb::app
