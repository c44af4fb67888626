#include "app/gui/pages/monitor/run_alerts.h"

#include "app/control/wire_text.h"
#include "app/gui/pages/alert_banner.h"
#include "app/gui/pages/monitor/metric_grid.h"
#include "core/metric_names.h"
#include "widgets/colours.h"
#include "widgets/curve_plot.h"

#include <QLocale>

#include <optional>
#include <variant>

namespace tb::app {

RunAlerts::RunAlerts(AlertBanner* banner, QObject* parent) : QObject(parent), m_banner(banner) {}

void RunAlerts::clear() {
  m_banner->clear();
  m_marks.clear();
  m_interruptionAlerted = false;
}

void RunAlerts::mark(qint64 step, const QString& code) {
  const QPair<qint64, QString> entry(step, code);
  if (m_marks.size() < widgets::CurvePlot::kMaxMarkers - 10 && !m_marks.contains(entry)) {
    m_marks.append(entry);
  }
}

bool RunAlerts::addEvents(const QVector<core::Event>& events, std::optional<qint64> runStep) {
  const int marksBefore = m_marks.size();
  for (const core::Event& event : events) {
    if (const auto* warning = std::get_if<core::WarningEvent>(&event)) {
      const QString code = QString::fromStdString(warning->code);
      m_banner->addAlert(
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
      m_banner->addAlert(RunAlert{QString::fromStdString(error->code), message, runStep,
                                  RunAlert::Severity::Critical});
      if (runStep) {
        mark(*runStep, QStringLiteral("error"));
      }
    }
  }
  return m_marks.size() != marksBefore;
}

void RunAlerts::alertInterrupted(qint64 lastStep) {
  if (m_interruptionAlerted) {
    return;
  }
  m_interruptionAlerted = true;
  m_banner->addAlert(
      RunAlert{QStringLiteral("interrupted"),
               tr("The trainer stopped at step %1 without saying why (killed, crashed, or its "
                  "machine went down). Resume continues from the last checkpoint.")
                   .arg(QLocale().toString(lastStep)),
               lastStep, RunAlert::Severity::Critical});
}

void RunAlerts::markSteps(MetricGrid& grid, const RunMetrics& metrics) const {
  MetricGrid::Panel* loss = grid.panelOf(wireText(core::metric::kTrainLoss));
  for (int i = 0; i < m_marks.size(); ++i) {
    const auto& [step, code] = m_marks[i];
    const QString id = QStringLiteral("alert:%1").arg(i);
    if (const std::optional<double> x = grid.xAt(*loss, metrics, step)) {
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

}  // namespace tb::app
