// MonitorPage: what the followed runs' files say, passed to the parts that show it (plots,
// alerts, progress, codebook, reference line, configuration).

#include "app/gui/pages/monitor/monitor_page.h"

#include "app/control/run_follower.h"
#include "app/control/run_metrics.h"
#include "app/control/wire_text.h"
#include "app/gui/pages/alert_banner.h"
#include "app/gui/pages/metric_chooser.h"
#include "app/gui/pages/monitor/followed_runs.h"
#include "app/gui/pages/monitor/metric_grid.h"
#include "app/gui/pages/monitor/run_alerts.h"
#include "app/gui/pages/monitor/run_configuration_tab.h"
#include "app/gui/pages/run_progress_view.h"
#include "core/metric_names.h"
#include "core/reference_codec_info.h"
#include "widgets/codebook_view.h"
#include "widgets/colours.h"
#include "widgets/curve_plot.h"

#include <QDateTime>
#include <QDir>

#include <cmath>
#include <limits>
#include <optional>
#include <variant>

namespace tb::app {
namespace {

const QString kPerplexity = wireText(core::metric::kValidPerplexity);
const QString kUsage = wireText(core::metric::kValidCodebookUsage);

}  // namespace

void MonitorPage::onReset(FollowedRun* run) {
  const int index = m_runs->indexOf(run);
  m_grid->removeSeriesOf(index);
  run->metrics.clear();
  run->hellos = 0;
  if (index == 0) {
    m_runAlerts->clear();
    m_codebook->clear();
    m_grid->clearMarkersAndRepeats();
    m_progress->clear();
    updateMarkers();  // the discriminator's step is still the config's
  }
  m_grid->updateLayout();
}

void MonitorPage::onRows(FollowedRun* run, const QVector<core::MetricsRow>& rows) {
  const int index = m_runs->indexOf(run);
  const RunMetrics::Change change = run->metrics.append(rows);
  for (const QString& metric : change.added) {
    m_chooser->addMetric(metric);
    m_grid->addMetric(metric);
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
    m_grid->updateRepeats();
    if (m_grid->wallClock() || m_runAlerts->hasMarks()) {
      updateMarkers();  // markers placed by wall time move as rows tell the times of steps
    }
    updateProgress();
  }
  m_grid->updateLayout();
  updateView();
}

void MonitorPage::onEvents(FollowedRun* run, const QVector<core::Event>& events) {
  for (const core::Event& event : events) {
    if (std::holds_alternative<core::HelloEvent>(event)) {
      ++run->hellos;
      if (run == &m_runs->at(0)) m_runAlerts->trainerStarted();  // a trainer runs again
    }
  }
  if (run->metrics.setSessionCount(run->hellos)) {
    // A stop between sessions moves the later rows on the wall-clock axes.
    const int index = m_runs->indexOf(run);
    for (const QString& metric : run->metrics.names()) plotMetric(index, metric, 0);
    updateMarkers();
  }
  if (m_runs->indexOf(run) != 0) {
    return;  // overlays are there to compare curves; their alerts belong to their own Monitor
  }
  if (m_runAlerts->addEvents(events, run->follower->step())) {
    updateMarkers();
  }
  updateProgress();
}

void MonitorPage::plotMetric(int runIndex, const QString& metric, int from) {
  if (!m_grid->plotMetric(runIndex, metric, from)) {
    return;
  }
  // The Codebook tab draws the open run's perplexity and usage over the run too.
  if (runIndex == 0 && (metric == kPerplexity || metric == kUsage)) {
    plotCodebookCurve(metric, from);
  }
}

void MonitorPage::refeedAll() {
  for (int i = 0; i < m_runs->count(); ++i) {
    for (const QString& metric : m_runs->at(i).metrics.names()) {
      plotMetric(i, metric, 0);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Codebook

void MonitorPage::plotCodebookCurve(const QString& metric, int from) {
  const FollowedRun& run = m_runs->at(0);
  const RunMetrics::Series* series = run.metrics.series(metric);
  widgets::CurvePlot* target =
      metric == kPerplexity ? m_codebook->perplexityPlot() : m_codebook->usagePlot();
  const QString codebookName = metric == kPerplexity ? tr("perplexity") : tr("codes used");
  const bool codebookWall = m_grid->wallClock();
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

void MonitorPage::onCodebookChanged(qint64 step) {
  if (m_runs->isEmpty()) {
    return;
  }
  m_codebook->setAvailableSteps(m_runs->at(0).follower->codebookSteps());
  if (step == m_codebook->shownStep()) {
    loadCodebookCounts(step);  // the shown file was rewritten
  }
}

void MonitorPage::onCodebookRead(qint64 step, const QVector<qint64>& counts, const QString& error) {
  if (error.isEmpty()) {
    m_codebook->setCounts(step, counts);
  } else {
    m_alerts->addAlert(
        RunAlert{QStringLiteral("codebook_unreadable"), error, step, RunAlert::Severity::Warning});
  }
}

void MonitorPage::loadCodebookCounts(qint64 step) {
  if (m_runs->isEmpty()) {
    return;
  }
  m_runs->at(0).follower->requestCodebookCounts(step);  // read off this thread
}

// ---------------------------------------------------------------------------------------------
// Progress, markers, reference line, configuration

void MonitorPage::updateProgress() {
  if (m_runs->isEmpty()) {
    m_progress->clear();
    return;
  }
  updateEmptyState();
  const FollowedRun& run = m_runs->at(0);
  const RunFollower& follower = *run.follower;
  const std::optional<RunSettings> settings = follower.settings();
  const std::optional<core::ProgressEvent> progress = follower.lastProgress();
  // The run's step, as the control bar and the Runs page say it (RunStep): not the last row's,
  // which trails it by up to train.log_every steps.
  const std::optional<qint64> runStep = follower.step();
  const qint64 step = runStep.value_or(0);
  const qint64 total = progress && progress->total > 0 ? progress->total
                       : settings                      ? settings->maxSteps
                                                       : 0;
  if (const std::optional<core::DoneEvent> done = follower.done()) {
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
  if ((progress || runStep) && follower.trainerHoldsLock() == false) {
    // No done event and no trainer holding the run's lock: it ended without a word (killed,
    // crashed, or its machine went down), as the Runs page says "interrupted".
    m_progress->setEnded(RunProgressView::State::Interrupted, step, total);
    m_runAlerts->alertInterrupted(step);
    return;
  }
  if (progress) {
    m_progress->setRunning(step, total, progress->it_per_s, progress->eta_s);
  } else if (run.metrics.rowCount() > 0) {
    m_progress->setRunning(step, total,
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

void MonitorPage::updateMarkers() {
  if (m_runs->isEmpty()) {
    return;
  }
  const FollowedRun& run = m_runs->at(0);
  const std::optional<RunSettings> settings = run.follower->settings();
  const bool gan = settings && settings->ganEnabled && settings->discrStartStep > 0;
  m_grid->markDiscriminatorStart(
      run.metrics, gan ? std::optional<std::int64_t>(settings->discrStartStep) : std::nullopt);
  m_runAlerts->markSteps(*m_grid, run.metrics);
}

// The reference codec is fitted before the first step; the follower reads its file.
void MonitorPage::updateReferenceLine() {
  widgets::CurvePlot* psnr = panel(QStringLiteral("psnr"));
  if (psnr == nullptr) return;
  const QString id = QStringLiteral("reference");
  const std::optional<core::ReferenceCodecInfo> info =
      m_runs->isEmpty() ? std::nullopt : m_runs->at(0).follower->referenceCodec();
  if (!info || !info->valid_psnr) {
    psnr->removeReferenceLine(id);
    return;
  }
  psnr->setReferenceLine(
      id, *info->valid_psnr,
      tr("%1: %2 dB").arg(QString::fromStdString(info->name)).arg(*info->valid_psnr, 0, 'f', 2),
      widgets::colours::reference());
}

void MonitorPage::loadConfiguration() {
  QString text;
  if (m_runs->isEmpty()) {
    text = tr("No run open.");
  } else {
    // As the follower read it, on its thread: a hung file system does not hold this page.
    text = m_runs->at(0).follower->configText();
    if (text.isEmpty()) {
      text = tr("%1: no readable configuration (yet)")
                 .arg(QDir::toNativeSeparators(
                     pathText(runDirectoryAt(m_runs->at(0).path).configFile())));
    }
  }
  m_configuration->showConfiguration(
      text, !m_runs->isEmpty() && !m_runs->at(0).follower->configText().isEmpty());
}

}  // namespace tb::app
