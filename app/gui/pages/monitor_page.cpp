#include "app/gui/pages/monitor_page.h"

#include "app/control/run_follower.h"
#include "app/control/run_metrics.h"
#include "app/control/wire_text.h"
#include "app/gui/pages/alert_banner.h"
#include "app/gui/pages/empty_state.h"
#include "app/gui/pages/metric_chooser.h"
#include "app/gui/pages/page_header.h"
#include "app/gui/pages/run_progress_view.h"
#include "core/metric_names.h"
#include "core/metric_panels.h"
#include "core/reference_codec_info.h"
#include "widgets/codebook_view.h"
#include "widgets/colours.h"
#include "widgets/curve_plot.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <variant>

namespace tb::app {
namespace {

// Tableau 10, as CurvePlot uses. One run: metric i of a panel gets colour i. Runs overlaid:
// run i gets colour i in every panel (TensorBoard and W&B give each run one colour), and the
// metrics of a panel are told apart by the line (kMetricStyles).
constexpr std::array<Qt::PenStyle, 5> kMetricStyles = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                                       Qt::DashDotLine, Qt::DashDotDotLine};
// Two series of one panel whose values differ by less than this (relative) are the same curve.
constexpr double kSameValueTolerance = 1e-9;
const QColor kDiscriminatorColor(0x55, 0x55, 0x55);

constexpr int kPanelMinimumHeight = 300;
constexpr int kPanelMinimumWidth = 360;
constexpr int kMaxGridColumns = 3;
constexpr int kClockMs = 5000;
constexpr double kSmoothingSteps = 100.0;  // slider positions per unit of weight

const QString kPerplexity = wireText(core::metric::kValidPerplexity);
const QString kUsage = wireText(core::metric::kValidCodebookUsage);

bool sameValues(const RunMetrics::Series& a, const RunMetrics::Series& b) {
  if (a.size() == 0 || a.size() != b.size() || a.steps != b.steps) return false;
  for (int i = 0; i < a.size(); ++i) {
    const double x = a.values[i];
    const double y = b.values[i];
    if (std::isnan(x) != std::isnan(y)) return false;
    if (!std::isnan(x) && std::abs(x - y) > kSameValueTolerance * std::max(std::abs(x), 1.0)) {
      return false;
    }
  }
  return true;
}

}  // namespace

struct MonitorPage::Run {
  QString path;
  QString label;
  RunFollower* follower = nullptr;  // owned by the page (QObject child)
  RunMetrics metrics;
  int hellos = 0;  // trainer sessions seen in events.jsonl
};

struct MonitorPage::Panel {
  core::MetricPanel spec;
  widgets::CurvePlot* plot = nullptr;
  QStringList metrics;  // in order of arrival: the index picks the colour or line
  // A metric whose values are another's of the same panel (train/recon_l1 when the
  // reconstruction loss is L1) -> the metric it repeats: drawn once, labelled with both.
  QHash<QString, QString> sameAs;
};

MonitorPage::MonitorPage(QWidget* parent) : QWidget(parent) {
  auto* header = new PageHeader(
      tr("Monitor"),
      tr("Curves, progress, alerts and codebook use of the open run, live or finished."), this);

  // Run line: name, progress, overlays.
  m_runName = new QLabel(this);
  m_runName->setObjectName(QStringLiteral("runName"));
  QFont nameFont = m_runName->font();
  nameFont.setBold(true);
  m_runName->setFont(nameFont);
  m_progress = new RunProgressView(this);
  m_overlayButton = new QPushButton(tr("Overlay Run\u2026"), this);
  m_overlayButton->setObjectName(QStringLiteral("overlayRunButton"));
  m_overlayButton->setToolTip(tr("Draw another run's curves over these, for comparison"));
  connect(m_overlayButton, &QPushButton::clicked, this, &MonitorPage::chooseOverlayRun);
  auto* runLine = new QHBoxLayout;
  runLine->setSpacing(14);
  runLine->addWidget(m_runName);
  runLine->addWidget(m_progress, 1);
  runLine->addWidget(m_overlayButton);

  m_alerts = new AlertBanner(this);

  // View controls.
  m_xAxisChooser = new QComboBox(this);
  m_xAxisChooser->setObjectName(QStringLiteral("xAxisChooser"));
  m_xAxisChooser->addItem(tr("Step"));
  m_xAxisChooser->addItem(tr("Wall-clock time"));
  connect(m_xAxisChooser, qOverload<int>(&QComboBox::activated), this,
          [this](int index) { setXAxis(index == 1 ? XAxis::WallClock : XAxis::Step); });
  m_smoothingSlider = new QSlider(Qt::Horizontal, this);
  m_smoothingSlider->setObjectName(QStringLiteral("smoothingSlider"));
  m_smoothingSlider->setRange(0, 99);
  m_smoothingSlider->setFixedWidth(150);
  m_smoothingSlider->setToolTip(
      tr("Exponential moving average of the training curves (debiased, as in TensorBoard); the "
         "raw values stay faint behind. Validation metrics are averages already and are drawn "
         "as they are."));
  m_smoothingValue = new QLabel(this);
  m_smoothingValue->setObjectName(QStringLiteral("smoothingValue"));
  m_smoothingValue->setMinimumWidth(QFontMetrics(font()).horizontalAdvance(QStringLiteral("0.00")) +
                                    4);
  connect(m_smoothingSlider, &QSlider::valueChanged, this,
          [this](int value) { setSmoothing(value / kSmoothingSteps); });
  m_ignoreOutliers = new QCheckBox(tr("Ignore outliers"), this);
  m_ignoreOutliers->setObjectName(QStringLiteral("ignoreOutliers"));
  m_ignoreOutliers->setChecked(true);
  m_ignoreOutliers->setToolTip(
      tr("Scale the y axes to the bulk of each curve; spikes are drawn but clipped"));
  connect(m_ignoreOutliers, &QCheckBox::toggled, this, &MonitorPage::setIgnoreOutliers);
  m_logX = new QCheckBox(tr("Log x"), this);
  m_logX->setObjectName(QStringLiteral("pageLogX"));
  m_logX->setToolTip(tr("Logarithmic x axis on every plot"));
  connect(m_logX, &QCheckBox::toggled, this, &MonitorPage::setLogX);
  m_overlayLabel = new QLabel(this);
  m_overlayLabel->setObjectName(QStringLiteral("overlayLabel"));
  m_overlayLabel->setForegroundRole(QPalette::PlaceholderText);
  m_clearOverlaysButton = new QToolButton(this);
  m_clearOverlaysButton->setObjectName(QStringLiteral("clearOverlaysButton"));
  m_clearOverlaysButton->setText(tr("Remove Overlays"));
  connect(m_clearOverlaysButton, &QToolButton::clicked, this, &MonitorPage::clearOverlayRuns);
  auto* controls = new QHBoxLayout;
  controls->setSpacing(8);
  controls->addWidget(new QLabel(tr("X axis"), this));
  controls->addWidget(m_xAxisChooser);
  controls->addSpacing(14);
  controls->addWidget(new QLabel(tr("Smoothing"), this));
  controls->addWidget(m_smoothingSlider);
  controls->addWidget(m_smoothingValue);
  controls->addSpacing(14);
  controls->addWidget(m_ignoreOutliers);
  controls->addWidget(m_logX);
  controls->addStretch(1);
  // The colour key of overlaid runs, on a line of its own (it grows with every run).
  m_overlayLabel->setWordWrap(true);
  m_overlayLabel->setTextFormat(Qt::RichText);
  auto* key = new QHBoxLayout;
  key->setSpacing(8);
  key->addWidget(m_overlayLabel, 1);
  key->addWidget(m_clearOverlaysButton);

  // Curves grid, one small plot per kind of metric.
  m_gridHost = new QWidget;
  m_grid = new QGridLayout(m_gridHost);
  m_grid->setContentsMargins(0, 0, 4, 0);
  m_grid->setSpacing(12);
  for (const core::MetricPanel& spec : core::metricPanels()) {
    auto panel = std::make_unique<Panel>();
    panel->spec = spec;
    panel->plot = new widgets::CurvePlot(m_gridHost);
    panel->plot->setObjectName(QStringLiteral("panel_%1").arg(QLatin1String(spec.id)));
    panel->plot->setTitle(tr(spec.title));
    panel->plot->setMinimumSize(kPanelMinimumWidth - 60, kPanelMinimumHeight);
    panel->plot->setSmoothing(spec.smoothed ? m_smoothing : 0.0);
    panel->plot->setWholeNumberX(!spec.wallClock);
    panel->plot->hide();
    connect(panel->plot, &widgets::CurvePlot::replotted, this, &MonitorPage::updateView);
    m_panels.push_back(std::move(panel));
  }
  m_gridArea = new QScrollArea(this);
  m_gridArea->setObjectName(QStringLiteral("curveGrid"));
  m_gridArea->setWidgetResizable(true);
  m_gridArea->setFrameShape(QFrame::NoFrame);
  m_gridArea->setWidget(m_gridHost);
  m_gridArea->viewport()->installEventFilter(this);

  m_codebook = new widgets::CodebookView(this);
  connect(m_codebook, &widgets::CodebookView::stepRequested, this,
          &MonitorPage::loadCodebookCounts);

  m_tabs = new QTabWidget(this);
  m_tabs->setObjectName(QStringLiteral("monitorTabs"));
  m_tabs->setDocumentMode(true);
  m_tabs->addTab(m_gridArea, tr("Curves"));
  // Scrolled, so that its histogram and curves never set the window's smallest size.
  auto* codebookScroll = new QScrollArea(this);
  codebookScroll->setObjectName(QStringLiteral("codebookScroll"));
  codebookScroll->setWidgetResizable(true);
  codebookScroll->setFrameShape(QFrame::NoFrame);
  codebookScroll->setWidget(m_codebook);
  m_tabs->addTab(codebookScroll, tr("Codebook"));
  m_tabs->addTab(buildConfigurationTab(), tr("Configuration"));

  m_chooser = new MetricChooser(this);
  m_chooser->setMinimumWidth(180);
  connect(m_chooser, &MetricChooser::checkedChanged, this,
          [this](const QString& metric, bool checked) {
            Q_UNUSED(checked);
            if (Panel* panel = panelOf(metric)) showSeriesOf(*panel);
          });

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
  contentLayout->addLayout(controls);
  contentLayout->addLayout(key);
  contentLayout->addWidget(splitter, 1);

  m_empty = new EmptyState({}, {}, this);
  m_stack = new QStackedWidget(this);
  m_stack->addWidget(m_empty);
  m_stack->addWidget(m_content);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->setSpacing(10);
  layout->addWidget(header);
  layout->addLayout(runLine);
  layout->addWidget(m_alerts);
  layout->addWidget(m_stack, 1);

  m_clock.setInterval(kClockMs);
  connect(&m_clock, &QTimer::timeout, this, &MonitorPage::updateProgress);

  {
    const QSignalBlocker blocker(m_smoothingSlider);
    m_smoothingSlider->setValue(static_cast<int>(std::lround(m_smoothing * kSmoothingSteps)));
  }
  m_smoothingValue->setText(QLocale().toString(m_smoothing, 'f', 2));
  setXAxis(XAxis::Step);  // axis labels and tickers; the PSNR panel is over wall-clock time
  setRunDirectory({});
}

MonitorPage::~MonitorPage() = default;

// ---------------------------------------------------------------------------------------------
// Runs

void MonitorPage::setRunDirectory(const QString& path) {
  for (const auto& run : m_runs) {
    delete run->follower;
  }
  m_runs.clear();
  m_alerts->clear();
  m_alertMarks.clear();
  m_progress->clear();
  m_codebook->clear();
  m_chooser->clear();
  for (const auto& panel : m_panels) {
    panel->plot->clear();
    panel->plot->clearMarkers();
    panel->metrics.clear();
    panel->sameAs.clear();
  }
  m_interruptionAlerted = false;
  m_clock.stop();
  if (path.isEmpty()) {
    m_empty->setText(tr("No run open"),
                     tr("Open a run directory (File \u25b8 Open Run Directory\u2026) to follow "
                        "its curves here, while it trains or after."));
  } else {
    const QString name = QFileInfo(path).fileName();
    m_empty->setText(tr("Waiting for metrics from %1").arg(name),
                     tr("Following %1. Curves appear when the trainer writes its first "
                        "metrics.jsonl row (every train.log_every steps).")
                         .arg(QDir::toNativeSeparators(path)));
    addRun(path, 0);
    m_clock.start();
  }
  updateReferenceLine();
  loadConfiguration();
  updateRunLabels();
  updateView();
}

QString MonitorPage::runDirectory() const { return m_runs.empty() ? QString() : m_runs[0]->path; }

bool MonitorPage::addOverlayRun(const QString& path) {
  const QFileInfo info(path);
  if (m_runs.empty() || !info.isDir()) {
    return false;
  }
  const QString absolute = QDir::cleanPath(info.absoluteFilePath());
  for (const auto& run : m_runs) {
    if (QDir::cleanPath(QFileInfo(run->path).absoluteFilePath()) == absolute) {
      return false;
    }
  }
  addRun(absolute, static_cast<int>(m_runs.size()));
  restyleSeries();  // with a second run, colours start telling runs apart
  updateRunLabels();
  updateGrid();
  return true;
}

QStringList MonitorPage::overlayRuns() const {
  QStringList paths;
  for (size_t i = 1; i < m_runs.size(); ++i) {
    paths.append(m_runs[i]->path);
  }
  return paths;
}

void MonitorPage::clearOverlayRuns() {
  while (m_runs.size() > 1) {
    const int index = static_cast<int>(m_runs.size()) - 1;
    Run* run = m_runs.back().get();
    for (const QString& metric : run->metrics.names()) {
      if (Panel* panel = panelOf(metric)) {
        panel->plot->removeSeries(seriesName(index, metric));
      }
    }
    delete run->follower;
    m_runs.pop_back();
  }
  restyleSeries();
  updateRunLabels();
  updateGrid();
}

RunFollower* MonitorPage::runFollower(int index) const {
  return index >= 0 && index < static_cast<int>(m_runs.size()) ? m_runs[index]->follower : nullptr;
}

void MonitorPage::pollNow() {
  for (const auto& run : m_runs) {
    run->follower->poll();
  }
  updateProgress();  // whether the trainer still runs is not in the files
}

bool MonitorPage::waitForReads(int timeoutMs) {
  QElapsedTimer clock;
  clock.start();
  // A delivery can ask for more (a new codebook file is read next), so look until all are idle.
  for (;;) {
    bool idle = true;
    for (const auto& run : m_runs) {
      if (run->follower->pendingReads() > 0) {
        idle = false;
        if (!run->follower->waitForReads(static_cast<int>(timeoutMs - clock.elapsed()))) {
          return false;
        }
      }
    }
    if (idle) {
      return true;
    }
  }
}

MonitorPage::Run* MonitorPage::addRun(const QString& path, int index) {
  auto run = std::make_unique<Run>();
  run->path = path;
  run->label = QFileInfo(path).fileName();
  for (const auto& other : m_runs) {
    if (other->label == run->label) {
      run->label += QStringLiteral(" (%1)").arg(index + 1);
    }
  }
  run->follower = new RunFollower(this);
  Run* raw = run.get();
  m_runs.push_back(std::move(run));
  connectRun(raw);
  raw->follower->setRunDirectory(path);  // reads what is there now
  raw->follower->start();
  return raw;
}

void MonitorPage::connectRun(Run* run) {
  RunFollower* follower = run->follower;
  connect(follower, &RunFollower::reset, this, [this, run] { onReset(run); });
  connect(follower, &RunFollower::rowsAppended, this,
          [this, run](const QVector<core::MetricsRow>& rows) { onRows(run, rows); });
  connect(follower, &RunFollower::eventsAppended, this,
          [this, run](const QVector<core::Event>& events) { onEvents(run, events); });
  if (runIndexOf(run) == 0) {
    connect(follower, &RunFollower::codebookCountsChanged, this, &MonitorPage::onCodebookChanged);
    connect(follower, &RunFollower::codebookCountsRead, this,
            [this](qint64 step, const QVector<qint64>& counts, const QString& error) {
              if (error.isEmpty()) {
                m_codebook->setCounts(step, counts);
              } else {
                m_alerts->addAlert(RunAlert{QStringLiteral("codebook_unreadable"), error, step,
                                            RunAlert::Severity::Warning});
              }
            });
    connect(follower, &RunFollower::referenceCodecChanged, this, &MonitorPage::updateReferenceLine);
    connect(follower, &RunFollower::settingsChanged, this, [this] {
      updateMarkers();
      updateProgress();
      loadConfiguration();
    });
  }
}

int MonitorPage::runIndexOf(const Run* run) const {
  for (size_t i = 0; i < m_runs.size(); ++i) {
    if (m_runs[i].get() == run) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void MonitorPage::onReset(Run* run) {
  const int index = runIndexOf(run);
  for (const QString& metric : run->metrics.names()) {
    if (Panel* panel = panelOf(metric)) {
      panel->plot->removeSeries(seriesName(index, metric));
    }
  }
  run->metrics.clear();
  run->hellos = 0;
  if (index == 0) {
    m_alerts->clear();
    m_alertMarks.clear();
    m_interruptionAlerted = false;
    m_codebook->clear();
    for (const auto& panel : m_panels) {
      panel->plot->clearMarkers();
      panel->sameAs.clear();
    }
    m_progress->clear();
    updateMarkers();  // the discriminator's step is still the config's
  }
  updateGrid();
}

void MonitorPage::onRows(Run* run, const QVector<core::MetricsRow>& rows) {
  const int index = runIndexOf(run);
  const RunMetrics::Change change = run->metrics.append(rows);
  for (const QString& metric : change.added) {
    registerMetric(metric);
  }
  // In the order the metrics first appeared, so that plots list them as the file does.
  for (const QString& metric : run->metrics.names()) {
    if (change.rewritten.contains(metric)) {
      plotMetric(index, metric, 0);
    } else if (const auto from = change.appendedFrom.constFind(metric);
               from != change.appendedFrom.cend()) {
      plotMetric(index, metric, *from);
    }
  }
  if (index == 0) {
    updateSameValues();
    if (m_xAxis == XAxis::WallClock || !m_alertMarks.isEmpty()) {
      updateMarkers();  // markers placed by wall time move as rows tell the times of steps
    }
    updateProgress();
  }
  updateGrid();
  updateView();
}

void MonitorPage::onEvents(Run* run, const QVector<core::Event>& events) {
  for (const core::Event& event : events) {
    if (std::holds_alternative<core::HelloEvent>(event)) {
      ++run->hellos;
      if (run == m_runs[0].get()) m_interruptionAlerted = false;  // a trainer runs again
    }
  }
  if (run->metrics.setSessionCount(run->hellos)) {
    // A stop between sessions moves the later rows on the wall-clock axes.
    const int index = runIndexOf(run);
    for (const QString& metric : run->metrics.names()) plotMetric(index, metric, 0);
    updateMarkers();
  }
  if (runIndexOf(run) != 0) {
    return;  // overlays are there to compare curves; their alerts belong to their own Monitor
  }
  const int marksBefore = m_alertMarks.size();
  auto mark = [this](qint64 step, const QString& code) {
    const QPair<qint64, QString> entry(step, code);
    if (m_alertMarks.size() < widgets::CurvePlot::kMaxMarkers - 10 &&
        !m_alertMarks.contains(entry)) {
      m_alertMarks.append(entry);
    }
  };
  for (const core::Event& event : events) {
    if (const auto* warning = std::get_if<core::WarningEvent>(&event)) {
      const QString code = QString::fromStdString(warning->code);
      m_alerts->addAlert(
          RunAlert{code, QString::fromStdString(warning->message),
                   warning->step ? std::optional<qint64>(*warning->step) : std::nullopt,
                   AlertBanner::severityOfWarning(code)});
      if (warning->step && (code == wireText(core::warning_code::kNonfiniteStep) ||
                            code == wireText(core::warning_code::kRollback) ||
                            code == wireText(core::warning_code::kDataSkipped))) {
        mark(*warning->step, code);
      }
    } else if (const auto* error = std::get_if<core::ErrorEvent>(&event)) {
      QString message = QString::fromStdString(error->message);
      if (!error->hint.empty()) {
        message += QStringLiteral(" (%1)").arg(QString::fromStdString(error->hint));
      }
      const std::optional<std::int64_t> step = run->metrics.lastStep();
      m_alerts->addAlert(RunAlert{QString::fromStdString(error->code), message,
                                  step ? std::optional<qint64>(*step) : std::nullopt,
                                  RunAlert::Severity::Critical});
      if (step) {
        mark(*step, QStringLiteral("error"));
      }
    }
  }
  if (m_alertMarks.size() != marksBefore) {
    updateMarkers();
  }
  updateProgress();
}

void MonitorPage::registerMetric(const QString& metric) {
  m_chooser->addMetric(metric);
  Panel* panel = panelOf(metric);
  if (panel != nullptr && !panel->metrics.contains(metric)) {
    panel->metrics.append(metric);
  }
}

QString MonitorPage::seriesName(int runIndex, const QString& metric) const {
  if (runIndex <= 0 || runIndex >= static_cast<int>(m_runs.size())) {
    return metric;
  }
  return QStringLiteral("%1 \u00b7 %2").arg(metric, m_runs[runIndex]->label);
}

void MonitorPage::plotMetric(int runIndex, const QString& metric, int from) {
  const Run& run = *m_runs[runIndex];
  const RunMetrics::Series* series = run.metrics.series(metric);
  Panel* panel = panelOf(metric);
  if (series == nullptr || panel == nullptr) {
    return;
  }
  const bool wall = panelUsesWallClock(*panel);
  QVector<double> xs;
  QVector<double> ys;
  xs.reserve(series->size() - from);
  ys.reserve(series->size() - from);
  for (int i = from; i < series->size(); ++i) {
    const double x = wall ? run.metrics.trainingSeconds(series->wallTimes[i]) : series->steps[i];
    if (std::isfinite(x)) {
      xs.append(x);
      ys.append(series->values[i]);
    }
  }
  const QString name = seriesName(runIndex, metric);
  const bool isNew = panel->plot->pointCount(name) < 0;
  if (from == 0) {
    panel->plot->setSeries(name, xs, ys);
  } else {
    panel->plot->appendPoints(name, xs, ys);
  }
  if (isNew) {
    styleSeries(*panel, runIndex, metric);
    panel->plot->setSeriesVisible(name, isShown(*panel, metric));
  }
  // The Codebook tab draws the open run's perplexity and usage over the run too.
  if (runIndex == 0 && (metric == kPerplexity || metric == kUsage)) {
    widgets::CurvePlot* target =
        metric == kPerplexity ? m_codebook->perplexityPlot() : m_codebook->usagePlot();
    const QString codebookName = metric == kPerplexity ? tr("perplexity") : tr("codes used");
    const bool codebookWall = m_xAxis == XAxis::WallClock;
    QVector<double> cx;
    QVector<double> cy;
    for (int i = from; i < series->size(); ++i) {
      const double x =
          codebookWall ? run.metrics.trainingSeconds(series->wallTimes[i]) : series->steps[i];
      if (std::isfinite(x)) {
        cx.append(x);
        cy.append(metric == kUsage ? 100.0 * series->values[i] : series->values[i]);
      }
    }
    if (from == 0) {
      target->setSeries(codebookName, cx, cy);
    } else {
      target->appendPoints(codebookName, cx, cy);
    }
  }
}

void MonitorPage::refeedAll() {
  for (size_t i = 0; i < m_runs.size(); ++i) {
    for (const QString& metric : m_runs[i]->metrics.names()) {
      plotMetric(static_cast<int>(i), metric, 0);
    }
  }
}

bool MonitorPage::panelUsesWallClock(const Panel& panel) const {
  return panel.spec.wallClock || m_xAxis == XAxis::WallClock;
}

MonitorPage::Panel* MonitorPage::panelOf(const QString& metric) const {
  const QString id = panelIdOfMetric(metric);
  for (const auto& panel : m_panels) {
    if (QLatin1String(panel->spec.id) == id) {
      return panel.get();
    }
  }
  return nullptr;
}

QString MonitorPage::panelIdOfMetric(const QString& metric) {
  return QString::fromLatin1(core::metricPanelOf(metric.toStdString()).id);
}

std::optional<double> MonitorPage::xOf(const Run& run, const Panel& panel,
                                       std::int64_t step) const {
  if (!panelUsesWallClock(panel)) {
    return static_cast<double>(step);
  }
  return run.metrics.elapsedAtStep(step);
}

// ---------------------------------------------------------------------------------------------
// Events: alerts and progress

void MonitorPage::onCodebookChanged(qint64 step) {
  if (m_runs.empty()) {
    return;
  }
  m_codebook->setAvailableSteps(m_runs[0]->follower->codebookSteps());
  if (step == m_codebook->shownStep()) {
    loadCodebookCounts(step);  // the shown file was rewritten
  }
}

void MonitorPage::loadCodebookCounts(qint64 step) {
  if (m_runs.empty()) {
    return;
  }
  m_runs[0]->follower->requestCodebookCounts(step);  // read off this thread
}

void MonitorPage::updateProgress() {
  if (m_runs.empty()) {
    m_progress->clear();
    return;
  }
  const Run& run = *m_runs[0];
  const RunFollower& follower = *run.follower;
  const std::optional<RunSettings> settings = follower.settings();
  const std::optional<core::ProgressEvent> progress = follower.lastProgress();
  const qint64 lastStep = run.metrics.lastStep().value_or(progress ? progress->step : 0);
  const qint64 total = progress && progress->total > 0 ? progress->total
                       : settings                      ? settings->maxSteps
                                                       : 0;
  if (const std::optional<core::DoneEvent> done = follower.done()) {
    const qint64 step = done->step.value_or(lastStep);
    if (done->status == "completed") {
      m_progress->setEnded(RunProgressView::State::Completed, step, total);
    } else if (done->status == "stopped") {
      m_progress->setEnded(RunProgressView::State::Stopped, step, total);
    } else {
      const std::optional<core::ErrorEvent> error = follower.error();
      m_progress->setEnded(RunProgressView::State::Failed, step, total,
                           error ? QString::fromStdString(error->message) : QString());
    }
    return;
  }
  // The lock was probed by the follower's thread: this thread never waits on the run directory.
  if ((progress || run.metrics.rowCount() > 0) && follower.trainerHoldsLock() == false) {
    // No done event and no trainer holding the run's lock: it ended without a word (killed,
    // crashed, or its machine went down), as the Runs page says "interrupted".
    m_progress->setEnded(RunProgressView::State::Interrupted, lastStep, total);
    if (!m_interruptionAlerted) {
      m_interruptionAlerted = true;
      m_alerts->addAlert(
          RunAlert{QStringLiteral("interrupted"),
                   tr("The trainer stopped at step %1 without saying why (killed, crashed, or its "
                      "machine went down). Resume continues from the last checkpoint.")
                       .arg(QLocale().toString(lastStep)),
                   lastStep, RunAlert::Severity::Critical});
    }
    return;
  }
  if (progress) {
    m_progress->setRunning(progress->step, total, progress->it_per_s, progress->eta_s);
  } else if (run.metrics.rowCount() > 0) {
    m_progress->setRunning(lastStep, total,
                           run.metrics.latestValue(wireText(core::metric::kPerfItPerS))
                               .value_or(std::numeric_limits<double>::quiet_NaN()),
                           std::numeric_limits<double>::quiet_NaN());
  } else {
    m_progress->clear();
    return;
  }
  const QDateTime lastWrite = follower.lastWrite();
  if (lastWrite.isValid()) {
    m_progress->setLastWrite(lastWrite.secsTo(QDateTime::currentDateTime()));
  }
}

// The reference codec is fitted before the first step; the follower reads its file.
void MonitorPage::updateReferenceLine() {
  widgets::CurvePlot* psnr = panel(QStringLiteral("psnr"));
  if (psnr == nullptr) return;
  const QString id = QStringLiteral("reference");
  const std::optional<core::ReferenceCodecInfo> info =
      m_runs.empty() ? std::nullopt : m_runs[0]->follower->referenceCodec();
  if (!info || !info->valid_psnr) {
    psnr->removeReferenceLine(id);
    return;
  }
  psnr->setReferenceLine(
      id, *info->valid_psnr,
      tr("%1: %2 dB").arg(QString::fromStdString(info->name)).arg(*info->valid_psnr, 0, 'f', 2),
      widgets::colours::reference());
}

void MonitorPage::updateMarkers() {
  if (m_runs.empty()) {
    return;
  }
  const Run& run = *m_runs[0];
  const std::optional<RunSettings> settings = run.follower->settings();
  const bool gan = settings && settings->ganEnabled && settings->discrStartStep > 0;
  for (const auto& panel : m_panels) {
    const std::optional<double> x =
        gan ? xOf(run, *panel, settings->discrStartStep) : std::optional<double>();
    if (!x) {
      panel->plot->removeMarker(QStringLiteral("discr"));
      continue;
    }
    const QString id = QLatin1String(panel->spec.id);
    const bool labelled = id == QLatin1String("loss") || id == QLatin1String("gan");
    panel->plot->setMarker(
        QStringLiteral("discr"), *x,
        labelled ? tr("GAN from step %1").arg(QLocale().toString(settings->discrStartStep))
                 : QString(),
        kDiscriminatorColor, Qt::DashLine);
  }
  Panel* loss = panelOf(wireText(core::metric::kTrainLoss));
  for (int i = 0; i < m_alertMarks.size(); ++i) {
    const auto& [step, code] = m_alertMarks[i];
    const QString id = QStringLiteral("alert:%1").arg(i);
    if (const std::optional<double> x = xOf(run, *loss, step)) {
      const bool critical = AlertBanner::severityOfWarning(code) == RunAlert::Severity::Critical ||
                            code == QLatin1String("error");
      loss->plot->setMarker(id, *x, QString(),
                            critical ? widgets::colours::critical() : widgets::colours::warning(),
                            Qt::SolidLine);
    } else {
      loss->plot->removeMarker(id);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// View

void MonitorPage::setXAxis(XAxis axis) {
  m_xAxis = axis;
  {
    const QSignalBlocker blocker(m_xAxisChooser);
    m_xAxisChooser->setCurrentIndex(axis == XAxis::WallClock ? 1 : 0);
  }
  for (const auto& panel : m_panels) {
    const bool wall = panelUsesWallClock(*panel);
    panel->plot->setWholeNumberX(!wall);
    panel->plot->setTimeAxis(wall);
    panel->plot->setAxisLabels(wall ? tr("time since start (h:mm:ss)") : tr("step"),
                               tr(panel->spec.yLabel));
  }
  const bool wall = axis == XAxis::WallClock;
  m_codebook->setCurvesXAxis(wall ? tr("time since start (h:mm:ss)") : tr("step"), wall);
  refeedAll();
  updateMarkers();
}

void MonitorPage::setSmoothing(double weight) {
  m_smoothing = std::clamp(weight, 0.0, 0.99);
  {
    const QSignalBlocker blocker(m_smoothingSlider);
    m_smoothingSlider->setValue(static_cast<int>(std::lround(m_smoothing * kSmoothingSteps)));
  }
  m_smoothingValue->setText(QLocale().toString(m_smoothing, 'f', 2));
  for (const auto& panel : m_panels) {
    panel->plot->setSmoothing(panel->spec.smoothed ? m_smoothing : 0.0);
  }
}

void MonitorPage::setIgnoreOutliers(bool ignore) {
  {
    const QSignalBlocker blocker(m_ignoreOutliers);
    m_ignoreOutliers->setChecked(ignore);
  }
  for (const auto& panel : m_panels) {
    panel->plot->setIgnoreOutliers(ignore);
  }
}

void MonitorPage::setLogX(bool logarithmic) {
  {
    const QSignalBlocker blocker(m_logX);
    m_logX->setChecked(logarithmic);
  }
  for (const auto& panel : m_panels) {
    panel->plot->setLogX(logarithmic);
  }
}

void MonitorPage::setCurrentTab(int index) { m_tabs->setCurrentIndex(index); }

widgets::CurvePlot* MonitorPage::curvePlot() const { return panel(QStringLiteral("loss")); }

widgets::CurvePlot* MonitorPage::panel(const QString& id) const {
  for (const auto& panel : m_panels) {
    if (QLatin1String(panel->spec.id) == id) {
      return panel->plot;
    }
  }
  return nullptr;
}

QStringList MonitorPage::panelIds() const {
  QStringList ids;
  for (const auto& panel : m_panels) {
    ids.append(QLatin1String(panel->spec.id));
  }
  return ids;
}

QStringList MonitorPage::shownPanelIds() const { return m_gridShown; }

bool MonitorPage::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_gridArea->viewport() && event->type() == QEvent::Resize) {
    updateGrid();  // the column count follows the width
  }
  return QWidget::eventFilter(watched, event);
}

bool MonitorPage::isShowingPlot() const { return m_stack->currentWidget() == m_content; }

QString MonitorPage::emptyHeadline() const { return m_empty->headline(); }

void MonitorPage::updateGrid() {
  QStringList shown;
  for (const auto& panel : m_panels) {
    bool any = false;
    for (const QString& name : panel->plot->seriesNames()) {
      any = any || (panel->plot->isSeriesVisible(name) && panel->plot->pointCount(name) > 0);
    }
    if (any) {
      shown.append(QLatin1String(panel->spec.id));
    }
  }
  const int width = m_gridArea->viewport()->width();
  const int columns = std::clamp(width / kPanelMinimumWidth, 1, kMaxGridColumns);
  if (shown == m_gridShown && columns == m_gridColumns) {
    return;
  }
  m_gridShown = shown;
  m_gridColumns = columns;
  for (const auto& panel : m_panels) {
    m_grid->removeWidget(panel->plot);
    panel->plot->hide();
  }
  int position = 0;
  for (const auto& panel : m_panels) {
    if (shown.contains(QLatin1String(panel->spec.id))) {
      m_grid->addWidget(panel->plot, position / columns, position % columns);
      panel->plot->show();
      ++position;
    }
  }
  for (int c = 0; c < kMaxGridColumns; ++c) {
    m_grid->setColumnStretch(c, c < columns ? 1 : 0);
  }
  // Rows keep their height; the last one takes the slack so plots do not stretch to fill.
  const int rows = (position + columns - 1) / columns;
  for (int r = 0; r <= rows; ++r) {
    m_grid->setRowStretch(r, r == rows ? 1 : 0);
  }
}

void MonitorPage::updateView() {
  updateGrid();
  const bool haveRows = !m_runs.empty() && m_runs[0]->metrics.rowCount() > 0;
  m_stack->setCurrentWidget(haveRows || !m_gridShown.isEmpty() ? m_content
                                                               : static_cast<QWidget*>(m_empty));
}

void MonitorPage::updateRunLabels() {
  if (m_runs.empty()) {
    m_runName->setText(tr("No run"));
    m_runName->setToolTip({});
  } else {
    m_runName->setText(m_runs[0]->label);
    m_runName->setToolTip(QDir::toNativeSeparators(m_runs[0]->path));
  }
  // With no run the empty state says so; the run line would only repeat it.
  m_runName->setVisible(!m_runs.empty());
  m_overlayButton->setVisible(!m_runs.empty());
  // With overlays, the colour says which run a curve belongs to: this is the key.
  QStringList key;
  for (size_t i = 0; i < m_runs.size() && m_runs.size() > 1; ++i) {
    key.append(QStringLiteral("<span style='color:%1; font-size:large'>\u25a0</span>&nbsp;%2")
                   .arg(runColor(static_cast<int>(i)).name(), m_runs[i]->label.toHtmlEscaped()));
  }
  m_overlayLabel->setText(key.join(QStringLiteral(" &nbsp; ")));
  m_overlayLabel->setToolTip(
      key.isEmpty() ? QString()
                    : tr("Each run in its own colour; the metrics of a plot are told apart by "
                         "the line (solid, dashed, dotted, ...), as in its legend"));
  m_overlayLabel->setVisible(!key.isEmpty());
  m_clearOverlaysButton->setVisible(!key.isEmpty());
}

QColor MonitorPage::runColor(int runIndex) { return widgets::colours::series(runIndex); }

void MonitorPage::styleSeries(Panel& panel, int runIndex, const QString& metric) {
  const int metricIndex = std::max(0, static_cast<int>(panel.metrics.indexOf(metric)));
  const QString name = seriesName(runIndex, metric);
  if (m_runs.size() > 1) {
    panel.plot->setSeriesStyle(
        name, runColor(runIndex),
        kMetricStyles[static_cast<size_t>(metricIndex) % kMetricStyles.size()]);
  } else {
    panel.plot->setSeriesStyle(name, widgets::colours::series(metricIndex), Qt::SolidLine);
  }
  // The legend names the metrics once (the open run's lines); the run key above says the rest.
  panel.plot->setSeriesInLegend(name, runIndex == 0);
}

void MonitorPage::restyleSeries() {
  for (const auto& panel : m_panels) {
    for (size_t i = 0; i < m_runs.size(); ++i) {
      for (const QString& metric : panel->metrics) {
        if (panel->plot->pointCount(seriesName(static_cast<int>(i), metric)) >= 0) {
          styleSeries(*panel, static_cast<int>(i), metric);
        }
      }
    }
  }
}

bool MonitorPage::isShown(const Panel& panel, const QString& metric) const {
  // A repeat is drawn by the metric it repeats, while that one is shown.
  const auto repeats = panel.sameAs.constFind(metric);
  return m_chooser->isChecked(metric) &&
         (repeats == panel.sameAs.cend() || !m_chooser->isChecked(*repeats));
}

void MonitorPage::showSeriesOf(Panel& panel) {
  for (const QString& metric : panel.metrics) {
    for (size_t i = 0; i < m_runs.size(); ++i) {
      panel.plot->setSeriesVisible(seriesName(static_cast<int>(i), metric), isShown(panel, metric));
    }
    // "train/recon_loss = train/recon_l1" when the second is drawn under the first.
    QStringList same{metric};
    for (auto it = panel.sameAs.cbegin(); it != panel.sameAs.cend(); ++it) {
      if (it.value() == metric && m_chooser->isChecked(it.key())) same.append(it.key());
    }
    panel.plot->setSeriesLabel(metric,
                               same.size() > 1 ? same.join(QStringLiteral(" = ")) : QString());
  }
}

void MonitorPage::updateSameValues() {
  if (m_runs.empty()) return;
  const RunMetrics& metrics = m_runs[0]->metrics;
  for (const auto& panel : m_panels) {
    QHash<QString, QString> sameAs;
    for (int b = 1; b < panel->metrics.size(); ++b) {
      const RunMetrics::Series* later = metrics.series(panel->metrics[b]);
      for (int a = 0; a < b && later != nullptr; ++a) {
        const RunMetrics::Series* earlier = metrics.series(panel->metrics[a]);
        if (earlier != nullptr && !sameAs.contains(panel->metrics[a]) &&
            sameValues(*earlier, *later)) {
          sameAs.insert(panel->metrics[b], panel->metrics[a]);
          break;
        }
      }
    }
    if (sameAs != panel->sameAs) {
      panel->sameAs = sameAs;
      showSeriesOf(*panel);
    }
  }
}

QWidget* MonitorPage::buildConfigurationTab() {
  auto* tab = new QWidget(this);
  auto* intro = new QLabel(
      tr("The run's own config.json: what it trains with, whoever started it. The Setup page "
         "holds the next run's settings."),
      tab);
  intro->setWordWrap(true);
  intro->setForegroundRole(QPalette::PlaceholderText);
  m_newRunFromConfig = new QPushButton(tr("New Run from This Configuration"), tab);
  m_newRunFromConfig->setObjectName(QStringLiteral("newRunFromConfiguration"));
  m_newRunFromConfig->setToolTip(
      tr("Load this configuration into the Setup page, under a new run name"));
  connect(m_newRunFromConfig, &QPushButton::clicked, this, [this] {
    if (!m_runs.empty()) {
      Q_EMIT newRunFromConfigurationRequested(
          pathText(runDirectoryAt(m_runs[0]->path).configFile()));
    }
  });
  m_configView = new QPlainTextEdit(tab);
  m_configView->setObjectName(QStringLiteral("runConfiguration"));
  m_configView->setReadOnly(true);
  m_configView->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto* row = new QHBoxLayout;
  row->addWidget(intro, 1);
  row->addWidget(m_newRunFromConfig);
  auto* layout = new QVBoxLayout(tab);
  layout->setContentsMargins(0, 8, 0, 0);
  layout->addLayout(row);
  layout->addWidget(m_configView, 1);
  return tab;
}

void MonitorPage::loadConfiguration() {
  QString text;
  if (m_runs.empty()) {
    text = tr("No run open.");
  } else {
    // As the follower read it, on its thread: a hung file system does not hold this page.
    text = m_runs[0]->follower->configText();
    if (text.isEmpty()) {
      text = tr("%1: no readable configuration (yet)")
                 .arg(QDir::toNativeSeparators(
                     pathText(runDirectoryAt(m_runs[0]->path).configFile())));
    }
  }
  if (m_configView->toPlainText() != text) m_configView->setPlainText(text);
  m_newRunFromConfig->setEnabled(!m_runs.empty() && !m_runs[0]->follower->configText().isEmpty());
}

QString MonitorPage::configurationText() const { return m_configView->toPlainText(); }

void MonitorPage::chooseOverlayRun() {
  const QString path = QFileDialog::getExistingDirectory(
      this, tr("Overlay Run Directory"),
      m_runs.empty() ? QString() : QFileInfo(m_runs[0]->path).absolutePath());
  if (!path.isEmpty()) {
    addOverlayRun(path);
  }
}

}  // namespace tb::app
