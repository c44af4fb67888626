#include "widgets/curve_plot.h"

#include "widgets/qcustomplot_no_keywords.h"

#include <QCheckBox>
#include <QColor>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <array>

namespace tb::widgets {
namespace {

// Tableau 10: distinct on white, and what users of matplotlib already associate with curves.
constexpr std::array<QRgb, 10> kSeriesColors = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                                0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};

// Breathing room around the data when the axes follow it.
constexpr double kRangeMargin = 1.05;

}  // namespace

CurvePlot::CurvePlot(QWidget* parent) : QWidget(parent) {
  m_title = new QLabel(this);
  m_title->setObjectName(QStringLiteral("title"));
  QFont titleFont = m_title->font();
  titleFont.setBold(true);
  m_title->setFont(titleFont);
  m_title->hide();

  m_logYToggle = new QCheckBox(tr("Log scale"), this);
  m_logYToggle->setObjectName(QStringLiteral("logYToggle"));
  m_logYToggle->setToolTip(tr("Show the y axis on a logarithmic scale"));
  connect(m_logYToggle, &QCheckBox::toggled, this, &CurvePlot::setLogY);

  m_plot = new QCustomPlot(this);
  m_plot->setObjectName(QStringLiteral("customPlot"));
  m_plot->setMinimumSize(240, 160);
  m_plot->setAntialiasedElements(QCP::aeAll);
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_plot->xAxis->setLabel(tr("step"));
  m_plot->yAxis->setLabel(tr("value"));
  m_plot->legend->setVisible(false);
  m_plot->legend->setBrush(QColor(255, 255, 255, 220));
  m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  // Once the user moves the view, stop following the data; a double click follows it again.
  connect(m_plot, &QCustomPlot::mousePress, this, [this] { followData(false); });
  connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { followData(false); });
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { followData(true); });

  m_replotTimer.setSingleShot(true);
  m_replotTimer.setInterval(kDefaultReplotIntervalMs);
  connect(&m_replotTimer, &QTimer::timeout, this, &CurvePlot::replotNow);

  auto* header = new QHBoxLayout;
  header->setContentsMargins(0, 0, 0, 0);
  header->addWidget(m_title);
  header->addStretch(1);
  header->addWidget(m_logYToggle);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(header);
  layout->addWidget(m_plot, 1);
}

CurvePlot::~CurvePlot() = default;

bool CurvePlot::setSeries(const QString& name, const QVector<double>& xs,
                          const QVector<double>& ys) {
  if (xs.size() != ys.size()) {
    return false;
  }
  graphFor(name)->setData(xs, ys);
  scheduleReplot();
  return true;
}

bool CurvePlot::appendPoints(const QString& name, const QVector<double>& xs,
                             const QVector<double>& ys) {
  if (xs.size() != ys.size()) {
    return false;
  }
  graphFor(name)->addData(xs, ys);
  scheduleReplot();
  return true;
}

void CurvePlot::appendPoint(const QString& name, double x, double y) {
  graphFor(name)->addData(x, y);
  scheduleReplot();
}

bool CurvePlot::removeSeries(const QString& name) {
  QCPGraph* graph = m_graphs.take(name);
  if (graph == nullptr) {
    return false;
  }
  m_order.removeOne(name);
  m_plot->removeGraph(graph);
  updateLegend();
  scheduleReplot();
  return true;
}

void CurvePlot::clear() {
  m_plot->clearGraphs();
  m_graphs.clear();
  m_order.clear();
  m_colorIndex = 0;
  updateLegend();
  scheduleReplot();
}

QStringList CurvePlot::seriesNames() const { return m_order; }

int CurvePlot::pointCount(const QString& name) const {
  const QCPGraph* graph = m_graphs.value(name, nullptr);
  return graph == nullptr ? -1 : graph->dataCount();
}

void CurvePlot::setTitle(const QString& title) {
  m_title->setText(title);
  m_title->setVisible(!title.isEmpty());
}

QString CurvePlot::title() const { return m_title->text(); }

void CurvePlot::setAxisLabels(const QString& xLabel, const QString& yLabel) {
  m_plot->xAxis->setLabel(xLabel);
  m_plot->yAxis->setLabel(yLabel);
  scheduleReplot();
}

void CurvePlot::setLogY(bool logarithmic) {
  if (logarithmic == isLogY()) {
    return;
  }
  QCPAxis* axis = m_plot->yAxis;
  if (logarithmic) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    axis->setNumberFormat(QStringLiteral("eb"));  // 10^-3 rather than 0.001
    axis->setNumberPrecision(0);
  } else {
    axis->setScaleType(QCPAxis::stLinear);
    axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    axis->setNumberFormat(QStringLiteral("gbd"));  // QCustomPlot's defaults
    axis->setNumberPrecision(6);
  }
  {
    const QSignalBlocker blocker(m_logYToggle);
    m_logYToggle->setChecked(logarithmic);
  }
  m_followData = true;  // a linear range makes no sense on a log axis, and vice versa
  scheduleReplot();
  Q_EMIT logYChanged(logarithmic);
}

bool CurvePlot::isLogY() const { return m_plot->yAxis->scaleType() == QCPAxis::stLogarithmic; }

void CurvePlot::setReplotInterval(int milliseconds) {
  m_replotTimer.setInterval(qMax(0, milliseconds));
}

int CurvePlot::replotInterval() const { return m_replotTimer.interval(); }

bool CurvePlot::isReplotPending() const { return m_replotTimer.isActive(); }

int CurvePlot::replotCount() const { return m_replotCount; }

QCustomPlot* CurvePlot::customPlot() const { return m_plot; }

QCPGraph* CurvePlot::graph(const QString& name) const { return m_graphs.value(name, nullptr); }

void CurvePlot::replotNow() {
  m_replotTimer.stop();
  if (m_followData && m_plot->graphCount() > 0) {
    m_plot->rescaleAxes();
    m_plot->yAxis->scaleRange(kRangeMargin);
  }
  m_plot->replot();
  ++m_replotCount;
  Q_EMIT replotted();
}

QCPGraph* CurvePlot::graphFor(const QString& name) {
  if (QCPGraph* existing = m_graphs.value(name, nullptr)) {
    return existing;
  }
  QCPGraph* graph = m_plot->addGraph();
  graph->setName(name);
  QPen pen(QColor(kSeriesColors[static_cast<size_t>(m_colorIndex) % kSeriesColors.size()]));
  pen.setWidthF(1.5);
  graph->setPen(pen);
  ++m_colorIndex;
  m_graphs.insert(name, graph);
  m_order.append(name);
  updateLegend();
  return graph;
}

void CurvePlot::scheduleReplot() {
  if (!m_replotTimer.isActive()) {
    m_replotTimer.start();
  }
}

void CurvePlot::updateLegend() { m_plot->legend->setVisible(!m_order.isEmpty()); }

void CurvePlot::followData(bool follow) {
  m_followData = follow;
  if (follow) {
    scheduleReplot();
  }
}

}  // namespace tb::widgets
