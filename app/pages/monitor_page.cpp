#include "app/pages/monitor_page.h"

#include "app/pages/empty_state.h"
#include "app/pages/page_header.h"
#include "widgets/curve_plot.h"

#include <QDir>
#include <QFileInfo>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace tb::app {

MonitorPage::MonitorPage(QWidget* parent) : QWidget(parent) {
  auto* header = new PageHeader(
      tr("Monitor"), tr("Loss curves, learning rate and metrics of the open run as they arrive."),
      this);
  m_empty = new EmptyState({}, {}, this);
  m_plot = new widgets::CurvePlot(this);
  m_plot->setAxisLabels(tr("step"), tr("loss"));

  m_stack = new QStackedWidget(this);
  m_stack->addWidget(m_empty);
  m_stack->addWidget(m_plot);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->addWidget(header);
  layout->addWidget(m_stack, 1);

  // Whoever feeds the plot needs not know about the empty state: every replot re-decides.
  connect(m_plot, &widgets::CurvePlot::replotted, this, &MonitorPage::updateView);
  setRunDirectory({});
}

widgets::CurvePlot* MonitorPage::curvePlot() const { return m_plot; }

void MonitorPage::setRunDirectory(const QString& path) {
  if (path.isEmpty()) {
    m_empty->setText(tr("No run open"),
                     tr("Open a run directory (File \u25b8 Open Run Directory\u2026) to follow "
                        "its loss curves here."));
  } else {
    m_empty->setText(tr("No curves for %1 yet").arg(QFileInfo(path).fileName()),
                     tr("Reading metrics.jsonl from %1 is not available in this version.")
                         .arg(QDir::toNativeSeparators(path)));
  }
  updateView();
}

bool MonitorPage::isShowingPlot() const { return m_stack->currentWidget() == m_plot; }

QString MonitorPage::emptyHeadline() const { return m_empty->headline(); }

void MonitorPage::updateView() {
  m_stack->setCurrentWidget(m_plot->seriesNames().isEmpty() ? static_cast<QWidget*>(m_empty)
                                                            : m_plot);
}

}  // namespace tb::app
