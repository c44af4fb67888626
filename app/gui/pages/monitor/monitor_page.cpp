#include "app/gui/pages/monitor/monitor_page.h"

#include "app/control/config_document.h"
#include "app/control/run_follower.h"
#include "app/control/wire_text.h"
#include "app/gui/pages/alert_banner.h"
#include "app/gui/pages/empty_state.h"
#include "app/gui/pages/metric_chooser.h"
#include "app/gui/pages/monitor/curve_view_controls.h"
#include "app/gui/pages/monitor/followed_runs.h"
#include "app/gui/pages/monitor/metric_grid.h"
#include "app/gui/pages/monitor/overlay_key.h"
#include "app/gui/pages/monitor/run_alerts.h"
#include "app/gui/pages/monitor/run_configuration_tab.h"
#include "app/gui/pages/page_header.h"
#include "app/gui/pages/run_progress_view.h"
#include "widgets/codebook_view.h"
#include "widgets/curve_plot.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace tb::app {
namespace {

constexpr int kClockMs = 5000;

}  // namespace

MonitorPage::MonitorPage(QWidget* parent) : QWidget(parent), m_runs(new FollowedRuns(this)) {
  auto* header = new PageHeader(
      tr("Monitor"),
      tr("Curves, progress, alerts and codebook use of the open run, live or finished."), this);
  QLayout* runLine = buildRunLine();
  m_alerts = new AlertBanner(this);
  m_runAlerts = new RunAlerts(m_alerts, this);
  QWidget* content = buildContent();
  m_empty = new EmptyState({}, {}, this);
  m_stack = new QStackedWidget(this);
  m_stack->addWidget(m_empty);
  m_stack->addWidget(content);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->setSpacing(10);
  layout->addWidget(header);
  layout->addLayout(runLine);
  layout->addWidget(m_alerts);
  layout->addWidget(m_stack, 1);

  m_clock.setInterval(kClockMs);
  connectParts();
  m_controls->showSmoothing(smoothing());
  setXAxis(XAxis::Step);  // axis labels and tickers; the PSNR panel is over wall-clock time
  setRunDirectory({});
}

MonitorPage::~MonitorPage() = default;

// Run line: name, progress, overlays.
QLayout* MonitorPage::buildRunLine() {
  m_runName = new QLabel(this);
  m_runName->setObjectName(QStringLiteral("runName"));
  QFont nameFont = m_runName->font();
  nameFont.setBold(true);
  m_runName->setFont(nameFont);
  m_progress = new RunProgressView(this);
  m_overlayButton = new QPushButton(tr("Overlay Run\u2026"), this);
  m_overlayButton->setObjectName(QStringLiteral("overlayRunButton"));
  m_overlayButton->setToolTip(tr("Draw another run's curves over these, for comparison"));
  auto* runLine = new QHBoxLayout;
  runLine->setSpacing(14);
  runLine->addWidget(m_runName);
  runLine->addWidget(m_progress, 1);
  runLine->addWidget(m_overlayButton);
  return runLine;
}

// What the empty state gives way to: view controls, the overlays' key, and the metric chooser
// beside the tabs.
QWidget* MonitorPage::buildContent() {
  m_controls = new CurveViewControls(this);
  m_overlayKey = new OverlayKey(this);
  m_tabs = buildTabs();
  m_chooser = new MetricChooser(this);
  m_chooser->setMinimumWidth(180);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->setChildrenCollapsible(false);
  splitter->addWidget(m_chooser);
  splitter->addWidget(m_tabs);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({210, 900});

  m_content = new QWidget(this);
  auto* contentLayout = new QVBoxLayout(m_content);
  contentLayout->setContentsMargins(0, 0, 0, 0);
  contentLayout->setSpacing(8);
  contentLayout->addWidget(m_controls);
  contentLayout->addWidget(m_overlayKey);
  contentLayout->addWidget(splitter, 1);
  return m_content;
}

// Curves, Codebook and Configuration.
QTabWidget* MonitorPage::buildTabs() {
  m_grid = new MetricGrid(*m_runs, kDefaultSmoothing, this);
  m_codebook = new widgets::CodebookView(this);
  auto* tabs = new QTabWidget(this);
  tabs->setObjectName(QStringLiteral("monitorTabs"));
  tabs->setDocumentMode(true);
  tabs->addTab(m_grid, tr("Curves"));
  // Scrolled, so that its histogram and curves never set the window's smallest size.
  auto* codebookScroll = new QScrollArea(this);
  codebookScroll->setObjectName(QStringLiteral("codebookScroll"));
  codebookScroll->setWidgetResizable(true);
  codebookScroll->setFrameShape(QFrame::NoFrame);
  codebookScroll->setWidget(m_codebook);
  tabs->addTab(codebookScroll, tr("Codebook"));
  m_configuration = new RunConfigurationTab(this);
  tabs->addTab(m_configuration, tr("Configuration"));
  return tabs;
}

void MonitorPage::connectParts() {
  connect(m_overlayButton, &QPushButton::clicked, this, &MonitorPage::chooseOverlayRun);
  connect(m_overlayKey, &OverlayKey::removeOverlaysClicked, this, &MonitorPage::clearOverlayRuns);
  connect(m_controls, &CurveViewControls::wallClockChosen, this,
          [this](bool wallClock) { setXAxis(wallClock ? XAxis::WallClock : XAxis::Step); });
  connect(m_controls, &CurveViewControls::smoothingChosen, this, &MonitorPage::setSmoothing);
  connect(m_controls, &CurveViewControls::ignoreOutliersChosen, this,
          &MonitorPage::setIgnoreOutliers);
  connect(m_controls, &CurveViewControls::logXChosen, this, &MonitorPage::setLogX);
  connect(m_grid, &MetricGrid::replotted, this, &MonitorPage::updateView);
  m_grid->setMetricFilter([this](const QString& metric) { return m_chooser->isChecked(metric); });
  connect(m_chooser, &MetricChooser::checkedChanged, this,
          [this](const QString& metric, bool checked) {
            Q_UNUSED(checked);
            m_grid->showSeriesOf(metric);
          });
  connect(m_codebook, &widgets::CodebookView::stepRequested, this,
          &MonitorPage::loadCodebookCounts);
  connect(m_configuration, &RunConfigurationTab::newRunClicked, this, [this] {
    if (!m_runs->isEmpty()) {
      Q_EMIT newRunFromConfigurationRequested(
          pathText(runDirectoryAt(m_runs->at(0).path).configFile()));
    }
  });
  connect(&m_clock, &QTimer::timeout, this, &MonitorPage::updateProgress);

  connect(m_runs, &FollowedRuns::reset, this, &MonitorPage::onReset);
  connect(m_runs, &FollowedRuns::rowsAppended, this, &MonitorPage::onRows);
  connect(m_runs, &FollowedRuns::eventsAppended, this, &MonitorPage::onEvents);
  connect(m_runs, &FollowedRuns::openRunCodebookChanged, this, &MonitorPage::onCodebookChanged);
  connect(m_runs, &FollowedRuns::openRunCodebookRead, this, &MonitorPage::onCodebookRead);
  connect(m_runs, &FollowedRuns::openRunReferenceCodecChanged, this,
          &MonitorPage::updateReferenceLine);
  connect(m_runs, &FollowedRuns::openRunSettingsChanged, this, [this] {
    updateMarkers();
    updateProgress();
    loadConfiguration();
  });
}

// ---------------------------------------------------------------------------------------------
// Runs

void MonitorPage::setRunDirectory(const QString& path) {
  m_runs->clear();
  m_runAlerts->clear();
  m_progress->clear();
  m_codebook->clear();
  m_chooser->clear();
  m_grid->clear();
  m_clock.stop();
  if (path.isEmpty()) {
    m_empty->setText(tr("No run open"),
                     tr("Open a run directory (File \u25b8 Open Run Directory\u2026) to follow "
                        "its curves here, while it trains or after."));
  } else {
    m_runs->add(path);
    m_clock.start();
    updateEmptyState();
  }
  updateReferenceLine();
  loadConfiguration();
  updateRunLabels();
  updateView();
}

QString MonitorPage::runDirectory() const {
  return m_runs->isEmpty() ? QString() : m_runs->at(0).path;
}

bool MonitorPage::addOverlayRun(const QString& path) {
  const QFileInfo info(path);
  if (m_runs->isEmpty() || !info.isDir()) {
    return false;
  }
  const QString absolute = QDir::cleanPath(info.absoluteFilePath());
  if (m_runs->contains(absolute)) {
    return false;
  }
  m_runs->add(absolute);
  m_grid->restyleSeries();  // with a second run, colours start telling runs apart
  updateRunLabels();
  m_grid->updateLayout();
  return true;
}

QStringList MonitorPage::overlayRuns() const { return m_runs->overlayPaths(); }

void MonitorPage::clearOverlayRuns() {
  while (m_runs->count() > 1) {
    m_grid->removeSeriesOf(m_runs->count() - 1);
    m_runs->removeLast();
  }
  m_grid->restyleSeries();
  updateRunLabels();
  m_grid->updateLayout();
}

RunFollower* MonitorPage::runFollower(int index) const {
  return index >= 0 && index < m_runs->count() ? m_runs->at(index).follower : nullptr;
}

void MonitorPage::pollNow() {
  m_runs->pollNow();
  updateProgress();  // whether the trainer still runs is not in the files
}

bool MonitorPage::waitForReads(int timeoutMs) { return m_runs->waitForReads(timeoutMs); }

QString MonitorPage::seriesName(int runIndex, const QString& metric) const {
  return m_runs->seriesName(runIndex, metric);
}

QColor MonitorPage::runColor(int runIndex) { return FollowedRuns::color(runIndex); }

void MonitorPage::chooseOverlayRun() {
  const QString path = QFileDialog::getExistingDirectory(
      this, tr("Overlay Run Directory"),
      m_runs->isEmpty() ? QString() : QFileInfo(m_runs->at(0).path).absolutePath());
  if (!path.isEmpty()) {
    addOverlayRun(path);
  }
}

// ---------------------------------------------------------------------------------------------
// View

void MonitorPage::setXAxis(XAxis axis) {
  const bool wall = axis == XAxis::WallClock;
  m_controls->showWallClock(wall);
  m_grid->setWallClock(wall);
  m_codebook->setCurvesXAxis(wall ? tr("time since start (h:mm:ss)") : tr("step"), wall);
  refeedAll();
  updateMarkers();
}

MonitorPage::XAxis MonitorPage::xAxis() const {
  return m_grid->wallClock() ? XAxis::WallClock : XAxis::Step;
}

void MonitorPage::setSmoothing(double weight) {
  const double clamped = std::clamp(weight, 0.0, 0.99);
  m_controls->showSmoothing(clamped);
  m_grid->setSmoothing(clamped);
}

double MonitorPage::smoothing() const { return m_grid->smoothing(); }

void MonitorPage::setIgnoreOutliers(bool ignore) {
  m_controls->showIgnoreOutliers(ignore);
  m_grid->setIgnoreOutliers(ignore);
}

void MonitorPage::setLogX(bool logarithmic) {
  m_controls->showLogX(logarithmic);
  m_grid->setLogX(logarithmic);
}

void MonitorPage::setCurrentTab(int index) { m_tabs->setCurrentIndex(index); }

widgets::CurvePlot* MonitorPage::curvePlot() const { return panel(QStringLiteral("loss")); }

widgets::CurvePlot* MonitorPage::panel(const QString& id) const { return m_grid->plot(id); }

QStringList MonitorPage::panelIds() const { return m_grid->panelIds(); }

QStringList MonitorPage::shownPanelIds() const { return m_grid->shownPanelIds(); }

QString MonitorPage::panelIdOfMetric(const QString& metric) {
  return MetricGrid::panelIdOfMetric(metric);
}

bool MonitorPage::isShowingPlot() const { return m_stack->currentWidget() == m_content; }

QString MonitorPage::emptyHeadline() const { return m_empty->headline(); }

QString MonitorPage::configurationText() const { return m_configuration->text(); }

void MonitorPage::updateView() {
  m_grid->updateLayout();
  const bool haveRows = !m_runs->isEmpty() && m_runs->at(0).metrics.rowCount() > 0;
  m_stack->setCurrentWidget(
      haveRows || !m_grid->shownPanelIds().isEmpty() ? m_content : static_cast<QWidget*>(m_empty));
}

void MonitorPage::updateEmptyState() {
  if (m_runs->isEmpty()) return;
  const FollowedRun& run = m_runs->at(0);
  const RunFollower& follower = *run.follower;
  const QString name = QFileInfo(run.path).fileName();
  const std::optional<core::DoneEvent> done = follower.done();
  // As updateProgress() tells an interrupted run.
  const bool interrupted =
      !done && follower.trainerHoldsLock() == false && (follower.lastProgress() || follower.step());
  if (!done && !interrupted) {
    m_empty->setText(tr("Waiting for metrics from %1").arg(name),
                     tr("Following %1. Curves appear when the trainer writes its first "
                        "metrics.jsonl row (every train.log_every steps).")
                         .arg(QDir::toNativeSeparators(run.path)));
    return;
  }
  // It ended before its first row: say so, at the step the control bar and Runs page say.
  const QString how = !done                         ? tr("ended without a word")
                      : done->status == "completed" ? tr("completed")
                      : done->status == "stopped"   ? tr("was stopped")
                                                    : tr("failed");
  const std::optional<qint64> step = follower.step();
  m_empty->setText(
      step ? tr("%1 %2 at step %3, before its first metrics row")
                 .arg(name, how, QLocale().toString(*step))
           : tr("%1 %2 before its first metrics row").arg(name, how),
      tr("Curves come from metrics.jsonl, where the trainer writes a row every train.log_every "
         "steps (%1 in this run's configuration) and at its last planned step; this run ended "
         "before either. Lower train.log_every to see curves of short runs.")
          .arg(QLocale().toString(follower.config().config().train.log_every)));
}

void MonitorPage::updateRunLabels() {
  if (m_runs->isEmpty()) {
    m_runName->setText(tr("No run"));
    m_runName->setToolTip({});
  } else {
    m_runName->setText(m_runs->at(0).label);
    m_runName->setToolTip(QDir::toNativeSeparators(m_runs->at(0).path));
  }
  // With no run the empty state says so; the run line would only repeat it.
  m_runName->setVisible(!m_runs->isEmpty());
  m_overlayButton->setVisible(!m_runs->isEmpty());
  m_overlayKey->showRuns(*m_runs);
}

}  // namespace tb::app
