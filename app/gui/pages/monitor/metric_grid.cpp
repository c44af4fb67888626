#include "app/gui/pages/monitor/metric_grid.h"

#include "app/gui/pages/monitor/followed_runs.h"
#include "widgets/colours.h"
#include "widgets/curve_plot.h"

#include <QEvent>
#include <QGridLayout>
#include <QLocale>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace tb::app {
namespace {

// Tableau 10, as CurvePlot uses. One run: metric i of a panel gets colour i. Runs overlaid: run
// i gets colour i in every panel, and the metrics of a panel are told apart by the line.
constexpr std::array<Qt::PenStyle, 5> kMetricStyles = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                                       Qt::DashDotLine, Qt::DashDotDotLine};
// Two series of one panel whose values differ by less than this (relative) are the same curve.
constexpr double kSameValueTolerance = 1e-9;
const QColor kDiscriminatorColor(0x55, 0x55, 0x55);

constexpr int kPanelMinimumHeight = 300;
constexpr int kPanelMinimumWidth = 360;
constexpr int kMaxGridColumns = 3;

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

MetricGrid::MetricGrid(const FollowedRuns& runs, double smoothing, QWidget* parent)
    : QScrollArea(parent), m_runs(runs), m_smoothing(smoothing) {
  setObjectName(QStringLiteral("curveGrid"));
  auto* host = new QWidget;
  m_grid = new QGridLayout(host);
  m_grid->setContentsMargins(0, 0, 4, 0);
  m_grid->setSpacing(12);
  for (const core::MetricPanel& spec : core::metricPanels()) {
    auto panel = std::make_unique<Panel>();
    panel->spec = spec;
    panel->plot = new widgets::CurvePlot(host);
    panel->plot->setObjectName(QStringLiteral("panel_%1").arg(QLatin1String(spec.id)));
    panel->plot->setTitle(tr(spec.title));
    if (QLatin1String(spec.id) == QLatin1String("frechet")) {
      panel->plot->setToolTip(
          tr("Fréchet distances of the reconstructions of eval.clips held-out clips from the "
             "clips themselves (lower is better), with InceptionV3 features (rFID, every frame) "
             "or I3D features (rFVD, every clip). The number depends on N (papers use 50,000 "
             "ImageNet images or UCF-101's 3,783 test clips; a smaller N reads higher), the "
             "resize and the data: compare it only with runs evaluated the same way."));
    }
    panel->plot->setMinimumSize(kPanelMinimumWidth - 60, kPanelMinimumHeight);
    panel->plot->setSmoothing(spec.smoothed ? m_smoothing : 0.0);
    panel->plot->setWholeNumberX(!spec.wallClock);
    panel->plot->hide();
    connect(panel->plot, &widgets::CurvePlot::replotted, this, &MetricGrid::replotted);
    m_panels.push_back(std::move(panel));
  }
  setWidgetResizable(true);
  setFrameShape(QFrame::NoFrame);
  setWidget(host);
  viewport()->installEventFilter(this);
}

MetricGrid::~MetricGrid() = default;

// ---------------------------------------------------------------------------------------------
// Panels

widgets::CurvePlot* MetricGrid::plot(const QString& id) const {
  for (const auto& panel : m_panels) {
    if (QLatin1String(panel->spec.id) == id) {
      return panel->plot;
    }
  }
  return nullptr;
}

QStringList MetricGrid::panelIds() const {
  QStringList ids;
  for (const auto& panel : m_panels) {
    ids.append(QLatin1String(panel->spec.id));
  }
  return ids;
}

MetricGrid::Panel* MetricGrid::panelOf(const QString& metric) const {
  const QString id = panelIdOfMetric(metric);
  for (const auto& panel : m_panels) {
    if (QLatin1String(panel->spec.id) == id) {
      return panel.get();
    }
  }
  return nullptr;
}

QString MetricGrid::panelIdOfMetric(const QString& metric) {
  return QString::fromLatin1(core::metricPanelOf(metric.toStdString()).id);
}

// ---------------------------------------------------------------------------------------------
// Series

void MetricGrid::setMetricFilter(std::function<bool(const QString&)> isChecked) {
  m_isChecked = std::move(isChecked);
}

void MetricGrid::addMetric(const QString& metric) {
  Panel* panel = panelOf(metric);
  if (panel != nullptr && !panel->metrics.contains(metric)) {
    panel->metrics.append(metric);
  }
}

bool MetricGrid::plotMetric(int runIndex, const QString& metric, int from) {
  const FollowedRun& run = m_runs.at(runIndex);
  const RunMetrics::Series* series = run.metrics.series(metric);
  Panel* panel = panelOf(metric);
  if (series == nullptr || panel == nullptr) {
    return false;
  }
  const bool wall = usesWallClock(*panel);
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
  const QString name = m_runs.seriesName(runIndex, metric);
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
  if (runIndex == 0 && metric.startsWith(QLatin1String("eval/"))) retitleFrechet(run.metrics);
  return true;
}

void MetricGrid::retitleFrechet(const RunMetrics& metrics) {
  for (const auto& panel : m_panels) {
    if (QLatin1String(panel->spec.id) != QLatin1String("frechet")) continue;
    QStringList counts;
    for (const auto& [metric, label] :
         {std::pair{"eval/rfid_samples", "rFID"}, std::pair{"eval/rfvd_samples", "rFVD"}}) {
      const RunMetrics::Series* series = metrics.series(QLatin1String(metric));
      if (series != nullptr && !series->values.isEmpty()) {
        counts << tr("%1 N = %2").arg(QLatin1String(label)).arg(series->values.back(), 0, 'f', 0);
      }
    }
    const QString title = tr(panel->spec.title);
    panel->plot->setTitle(counts.isEmpty() ? title
                                           : title + QStringLiteral(" \u00b7 ") +
                                                 counts.join(QStringLiteral(", ")));
  }
}

void MetricGrid::removeSeriesOf(int runIndex) {
  for (const QString& metric : m_runs.at(runIndex).metrics.names()) {
    if (Panel* panel = panelOf(metric)) {
      panel->plot->removeSeries(m_runs.seriesName(runIndex, metric));
    }
  }
}

void MetricGrid::styleSeries(Panel& panel, int runIndex, const QString& metric) {
  const int metricIndex = std::max(0, static_cast<int>(panel.metrics.indexOf(metric)));
  const QString name = m_runs.seriesName(runIndex, metric);
  if (m_runs.count() > 1) {
    panel.plot->setSeriesStyle(
        name, FollowedRuns::color(runIndex),
        kMetricStyles[static_cast<size_t>(metricIndex) % kMetricStyles.size()]);
  } else {
    panel.plot->setSeriesStyle(name, widgets::colours::series(metricIndex), Qt::SolidLine);
  }
  // The legend names the metrics once (the open run's lines); the run key above says the rest.
  panel.plot->setSeriesInLegend(name, runIndex == 0);
}

void MetricGrid::restyleSeries() {
  for (const auto& panel : m_panels) {
    for (int i = 0; i < m_runs.count(); ++i) {
      for (const QString& metric : panel->metrics) {
        if (panel->plot->pointCount(m_runs.seriesName(i, metric)) >= 0) {
          styleSeries(*panel, i, metric);
        }
      }
    }
  }
}

bool MetricGrid::isShown(const Panel& panel, const QString& metric) const {
  // A repeat is drawn by the metric it repeats, while that one is shown.
  const auto repeats = panel.sameAs.constFind(metric);
  return m_isChecked(metric) && (repeats == panel.sameAs.cend() || !m_isChecked(*repeats));
}

void MetricGrid::showSeriesOf(const QString& metric) {
  if (Panel* panel = panelOf(metric)) showSeriesOf(*panel);
}

void MetricGrid::showSeriesOf(Panel& panel) {
  for (const QString& metric : panel.metrics) {
    for (int i = 0; i < m_runs.count(); ++i) {
      panel.plot->setSeriesVisible(m_runs.seriesName(i, metric), isShown(panel, metric));
    }
    // "train/recon_loss = train/recon_l1" when the second is drawn under the first.
    QStringList same{metric};
    for (auto it = panel.sameAs.cbegin(); it != panel.sameAs.cend(); ++it) {
      if (it.value() == metric && m_isChecked(it.key())) same.append(it.key());
    }
    panel.plot->setSeriesLabel(metric,
                               same.size() > 1 ? same.join(QStringLiteral(" = ")) : QString());
  }
}

void MetricGrid::updateRepeats() {
  if (m_runs.isEmpty()) return;
  const RunMetrics& metrics = m_runs.at(0).metrics;
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

void MetricGrid::clear() {
  for (const auto& panel : m_panels) {
    panel->plot->clear();
    panel->plot->clearMarkers();
    panel->metrics.clear();
    panel->sameAs.clear();
  }
}

void MetricGrid::clearMarkersAndRepeats() {
  for (const auto& panel : m_panels) {
    panel->plot->clearMarkers();
    panel->sameAs.clear();
  }
}

// ---------------------------------------------------------------------------------------------
// Axes and view

bool MetricGrid::usesWallClock(const Panel& panel) const {
  return panel.spec.wallClock || m_wallClock;
}

void MetricGrid::setWallClock(bool wallClock) {
  m_wallClock = wallClock;
  for (const auto& panel : m_panels) {
    const bool wall = usesWallClock(*panel);
    panel->plot->setWholeNumberX(!wall);
    panel->plot->setTimeAxis(wall);
    panel->plot->setAxisLabels(wall ? tr("time since start (h:mm:ss)") : tr("step"),
                               tr(panel->spec.yLabel));
  }
}

std::optional<double> MetricGrid::xAt(const Panel& panel, const RunMetrics& metrics,
                                      std::int64_t step) const {
  if (!usesWallClock(panel)) {
    return static_cast<double>(step);
  }
  return metrics.elapsedAtStep(step);
}

void MetricGrid::setSmoothing(double weight) {
  m_smoothing = weight;
  for (const auto& panel : m_panels) {
    panel->plot->setSmoothing(panel->spec.smoothed ? m_smoothing : 0.0);
  }
}

void MetricGrid::setIgnoreOutliers(bool ignore) {
  for (const auto& panel : m_panels) {
    panel->plot->setIgnoreOutliers(ignore);
  }
}

void MetricGrid::setLogX(bool logarithmic) {
  for (const auto& panel : m_panels) {
    panel->plot->setLogX(logarithmic);
  }
}

void MetricGrid::markDiscriminatorStart(const RunMetrics& metrics,
                                        std::optional<std::int64_t> step) {
  for (const auto& panel : m_panels) {
    const std::optional<double> x = step ? xAt(*panel, metrics, *step) : std::optional<double>();
    if (!x) {
      panel->plot->removeMarker(QStringLiteral("discr"));
      continue;
    }
    const QString id = QLatin1String(panel->spec.id);
    const bool labelled = id == QLatin1String("loss") || id == QLatin1String("gan");
    panel->plot->setMarker(
        QStringLiteral("discr"), *x,
        labelled ? tr("GAN from step %1").arg(QLocale().toString(*step)) : QString(),
        kDiscriminatorColor, Qt::DashLine);
  }
}

// ---------------------------------------------------------------------------------------------
// Layout

bool MetricGrid::eventFilter(QObject* watched, QEvent* event) {
  if (watched == viewport() && event->type() == QEvent::Resize) {
    updateLayout();  // the column count follows the width
  }
  return QScrollArea::eventFilter(watched, event);
}

void MetricGrid::updateLayout() {
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
  const int width = viewport()->width();
  const int columns = std::clamp(width / kPanelMinimumWidth, 1, kMaxGridColumns);
  if (shown == m_shown && columns == m_columns) {
    return;
  }
  m_shown = shown;
  m_columns = columns;
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

}  // namespace tb::app
