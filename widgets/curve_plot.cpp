#include "widgets/curve_plot.h"

#include "widgets/colours.h"
#include "widgets/qcustomplot_no_keywords.h"

#include <QCheckBox>
#include <QColor>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tb::widgets {
namespace {

constexpr const char* kRawLayer = "raw";

}  // namespace

CurvePlot::CurvePlot(QWidget* parent) : QWidget(parent) {
  m_title = new QLabel(this);
  m_title->setObjectName(QStringLiteral("title"));
  QFont titleFont = m_title->font();
  titleFont.setBold(true);
  m_title->setFont(titleFont);
  m_title->hide();

  m_logXToggle = new QCheckBox(tr("Log x"), this);
  m_logXToggle->setObjectName(QStringLiteral("logXToggle"));
  m_logXToggle->setToolTip(tr("Show the x axis on a logarithmic scale"));
  connect(m_logXToggle, &QCheckBox::toggled, this, &CurvePlot::setLogX);
  m_logYToggle = new QCheckBox(tr("Log y"), this);
  m_logYToggle->setObjectName(QStringLiteral("logYToggle"));
  m_logYToggle->setToolTip(tr("Show the y axis on a logarithmic scale"));
  connect(m_logYToggle, &QCheckBox::toggled, this, &CurvePlot::setLogY);

  m_plot = new QCustomPlot(this);
  m_plot->setObjectName(QStringLiteral("customPlot"));
  m_plot->setMinimumSize(240, 160);
  m_plot->setAntialiasedElements(QCP::aeAll);
  // Polylines of thousands of points drawn with a pen wider than one pixel: without this hint
  // QPainter strokes every join, which costs most of a replot.
  m_plot->setPlottingHint(QCP::phFastPolylines, true);
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_plot->xAxis->setLabel(tr("step"));
  m_plot->yAxis->setLabel(tr("value"));
  // The legend goes under the axes, in as many columns as fit: inside them it would hide the
  // curves of a small plot.
  m_plot->legend->setVisible(false);
  m_plot->axisRect()->insetLayout()->take(m_plot->legend);
  m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
  m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
  m_plot->plotLayout()->setRowSpacing(0);
  m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  m_plot->legend->setBrush(Qt::NoBrush);
  m_plot->legend->setBorderPen(Qt::NoPen);
  m_plot->legend->setMargins(QMargins(8, 0, 8, 4));
  m_plot->legend->setRowSpacing(0);
  m_plot->legend->setColumnSpacing(14);
  QFont legendFont = font();
  legendFont.setPointSizeF(legendFont.pointSizeF() * 0.85);
  m_plot->legend->setFont(legendFont);
  connect(m_plot, &QCustomPlot::beforeReplot, this, &CurvePlot::fitLegendAndTicks);
  // Raw curves lie under every smoothed one, whatever order the series were created in.
  m_plot->addLayer(QString::fromLatin1(kRawLayer), m_plot->layer(QStringLiteral("main")),
                   QCustomPlot::limBelow);
  m_annotations = std::make_unique<CurveAnnotations>(m_plot, QString::fromLatin1(kRawLayer));
  installNavigation();

  m_replotTimer.setSingleShot(true);
  m_replotTimer.setInterval(kDefaultReplotIntervalMs);
  connect(&m_replotTimer, &QTimer::timeout, this, &CurvePlot::replotNow);

  auto* header = new QHBoxLayout;
  header->setContentsMargins(4, 0, 4, 0);
  header->addWidget(m_title);
  header->addStretch(1);
  header->addWidget(m_logXToggle);
  header->addWidget(m_logYToggle);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(header);
  layout->addWidget(m_plot, 1);
}

CurvePlot::~CurvePlot() = default;

// ---------------------------------------------------------------------------------------------
// Series

bool CurvePlot::setSeries(const QString& name, const QVector<double>& xs,
                          const QVector<double>& ys) {
  if (xs.size() != ys.size()) {
    return false;
  }
  CurveSeries& series = seriesFor(name);
  series.raw->setData(xs, ys);
  series.smoothFromScratch = true;
  series.recomputeExtremes();
  scheduleReplot();
  return true;
}

bool CurvePlot::appendPoints(const QString& name, const QVector<double>& xs,
                             const QVector<double>& ys) {
  if (xs.size() != ys.size()) {
    return false;
  }
  CurveSeries& series = seriesFor(name);
  if (xs.isEmpty()) {
    return true;
  }
  const QSharedPointer<QCPGraphDataContainer> data = series.raw->data();
  const bool sorted = std::is_sorted(xs.cbegin(), xs.cend());
  // Strictly past the last point: QCustomPlot then appends without sorting, and the smoothed
  // curve can continue from where it stopped.
  const bool pastTheEnd = data->isEmpty() || xs.first() > (data->constEnd() - 1)->key;
  series.raw->addData(xs, ys, sorted);
  if (!(sorted && pastTheEnd)) {
    series.smoothFromScratch = true;
  }
  series.noteValues(ys);
  scheduleReplot();
  return true;
}

void CurvePlot::appendPoint(const QString& name, double x, double y) {
  appendPoints(name, QVector<double>{x}, QVector<double>{y});
}

bool CurvePlot::removeSeries(const QString& name) {
  if (!m_series.contains(name)) {
    return false;
  }
  const CurveSeries series = m_series.take(name);
  m_order.removeOne(name);
  m_plot->removeGraph(series.raw);
  if (series.smooth != nullptr) {
    m_plot->removeGraph(series.smooth);
  }
  updateLegend();
  scheduleReplot();
  return true;
}

void CurvePlot::clear() {
  m_plot->clearGraphs();
  m_series.clear();
  m_order.clear();
  m_colorIndex = 0;
  updateLegend();
  scheduleReplot();
}

QStringList CurvePlot::seriesNames() const { return m_order; }

int CurvePlot::pointCount(const QString& name) const {
  const auto it = m_series.constFind(name);
  return it == m_series.cend() ? -1 : it->raw->dataCount();
}

void CurvePlot::setSeriesStyle(const QString& name, const QColor& color, Qt::PenStyle style) {
  CurveSeries& series = seriesFor(name);
  series.color = color;
  series.style = style;
  series.applyStyle(m_smoothing);
  scheduleReplot();
}

QColor CurvePlot::seriesColor(const QString& name) const {
  const auto it = m_series.constFind(name);
  return it == m_series.cend() ? QColor() : it->color;
}

bool CurvePlot::setSeriesVisible(const QString& name, bool visible) {
  const auto it = m_series.find(name);
  if (it == m_series.end()) {
    return false;
  }
  if (it->visible != visible) {
    it->visible = visible;
    it->applyStyle(m_smoothing);
    updateLegend();
    scheduleReplot();
  }
  return true;
}

bool CurvePlot::isSeriesVisible(const QString& name) const {
  const auto it = m_series.constFind(name);
  return it != m_series.cend() && it->visible;
}

void CurvePlot::setSeriesLabel(const QString& name, const QString& label) {
  CurveSeries& series = seriesFor(name);
  if (series.label == label) return;
  series.label = label;
  const QString text = label.isEmpty() ? name : label;
  series.raw->setName(text);
  if (series.smooth != nullptr) series.smooth->setName(text);
  updateLegend();
  scheduleReplot();
}

QString CurvePlot::seriesLabel(const QString& name) const {
  const auto it = m_series.constFind(name);
  if (it == m_series.cend()) return {};
  return it->label.isEmpty() ? name : it->label;
}

void CurvePlot::setSeriesInLegend(const QString& name, bool inLegend) {
  CurveSeries& series = seriesFor(name);
  if (series.inLegend == inLegend) return;
  series.inLegend = inLegend;
  updateLegend();
  scheduleReplot();
}

int CurvePlot::legendEntryCount() const { return m_plot->legend->itemCount(); }

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

void CurvePlot::setSmoothing(double weight) {
  const double clamped = std::isfinite(weight) ? std::clamp(weight, 0.0, 0.999) : 0.0;
  if (clamped == m_smoothing) {
    return;
  }
  m_smoothing = clamped;
  for (CurveSeries& series : m_series) {
    series.smoothFromScratch = true;
  }
  scheduleReplot();
}

double CurvePlot::smoothing() const { return m_smoothing; }

// ---------------------------------------------------------------------------------------------
// Markers and reference lines

bool CurvePlot::setMarker(const QString& id, double x, const QString& label, const QColor& color,
                          Qt::PenStyle style) {
  if (!m_annotations->setMarker(id, x, label, color, style)) {
    return false;
  }
  scheduleReplot();
  return true;
}

bool CurvePlot::removeMarker(const QString& id) {
  if (!m_annotations->removeMarker(id)) {
    return false;
  }
  scheduleReplot();
  return true;
}

void CurvePlot::clearMarkers(const QString& idPrefix) {
  if (m_annotations->clearMarkers(idPrefix) > 0) {
    scheduleReplot();
  }
}

QStringList CurvePlot::markerIds() const { return m_annotations->markerIds(); }

std::optional<double> CurvePlot::markerPosition(const QString& id) const {
  return m_annotations->markerPosition(id);
}

QString CurvePlot::markerLabel(const QString& id) const { return m_annotations->markerLabel(id); }

void CurvePlot::setReferenceLine(const QString& id, double y, const QString& label,
                                 const QColor& color) {
  m_annotations->setReferenceLine(id, y, label, color);
  scheduleReplot();
}

bool CurvePlot::removeReferenceLine(const QString& id) {
  if (!m_annotations->removeReferenceLine(id)) return false;
  scheduleReplot();
  return true;
}

std::optional<double> CurvePlot::referenceLineValue(const QString& id) const {
  return m_annotations->referenceLineValue(id);
}

QString CurvePlot::referenceLineLabel(const QString& id) const {
  return m_annotations->referenceLineLabel(id);
}

// ---------------------------------------------------------------------------------------------
// Replots

void CurvePlot::setReplotInterval(int milliseconds) {
  m_replotTimer.setInterval(qMax(0, milliseconds));
}

int CurvePlot::replotInterval() const { return m_replotTimer.interval(); }

bool CurvePlot::isReplotPending() const { return m_replotTimer.isActive(); }

int CurvePlot::replotCount() const { return m_replotCount; }

QCustomPlot* CurvePlot::customPlot() const { return m_plot; }

QCPGraph* CurvePlot::graph(const QString& name) const {
  const auto it = m_series.constFind(name);
  return it == m_series.cend() ? nullptr : it->raw;
}

QCPGraph* CurvePlot::smoothedGraph(const QString& name) const {
  const auto it = m_series.constFind(name);
  return it == m_series.cend() ? nullptr : it->smooth;
}

void CurvePlot::replotNow() {
  m_replotTimer.stop();
  for (const QString& name : m_order) {
    CurveSeries& series = m_series[name];
    series.updateSmoothed(m_plot, m_smoothing);
    series.applyStyle(m_smoothing);
  }
  updateLegend();
  if (m_followData && !m_series.isEmpty()) {
    rescaleToData();
  }
  m_plot->replot();
  ++m_replotCount;
  Q_EMIT replotted();
}

CurveSeries& CurvePlot::seriesFor(const QString& name) {
  const auto existing = m_series.find(name);
  if (existing != m_series.end()) {
    return *existing;
  }
  CurveSeries series;
  series.raw = m_plot->addGraph();
  series.raw->setName(name);
  series.raw->setLayer(QString::fromLatin1(kRawLayer));
  series.raw->setAdaptiveSampling(true);
  series.color = colours::series(m_colorIndex);
  ++m_colorIndex;
  auto it = m_series.insert(name, series);
  m_order.append(name);
  it->applyStyle(m_smoothing);
  updateLegend();
  return *it;
}

void CurvePlot::scheduleReplot() {
  if (!m_replotTimer.isActive()) {
    m_replotTimer.start();
  }
}

void CurvePlot::updateLegend() {
  // Rebuilt in series order, so that entries keep their place when smoothing swaps the graph
  // that stands for a series, or a series is hidden and shown again.
  m_plot->legend->clearItems();
  m_plot->legend->setWrap(legendColumns());
  int entries = 0;
  for (const QString& name : m_order) {
    const CurveSeries& series = m_series[name];
    if (series.visible && series.inLegend) {
      // Each series once, by the curve drawn in full colour.
      (series.smooth != nullptr ? series.smooth : series.raw)->addToLegend();
      ++entries;
    }
  }
  m_plot->legend->setVisible(entries > 0);
}

int CurvePlot::legendColumns() const {
  const QFontMetrics metrics(m_plot->legend->font());
  int widest = 0;
  int entries = 0;
  for (const QString& name : m_order) {
    const CurveSeries& series = m_series[name];
    if (series.visible && series.inLegend) {
      widest = std::max(widest, metrics.horizontalAdvance(series.raw->name()));
      ++entries;
    }
  }
  const int itemWidth = widest + m_plot->legend->iconSize().width() +
                        m_plot->legend->iconTextPadding() + m_plot->legend->columnSpacing() + 8;
  return std::clamp(m_plot->width() / std::max(1, itemWidth), 1, std::max(1, entries));
}

// Before every replot: the ticks and the legend's columns fit the plot's size now.
void CurvePlot::fitLegendAndTicks() {
  fitLogTicks();
  const int columns = legendColumns();
  if (m_plot->legend->wrap() != columns) {
    m_plot->legend->setWrap(columns);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // re-flows the entries
  }
}

}  // namespace tb::widgets
