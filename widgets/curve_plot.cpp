#include "widgets/curve_plot.h"

#include "widgets/colours.h"
#include "widgets/qcustomplot_no_keywords.h"
#include "widgets/robust_range.h"
#include "widgets/wheel_filter.h"

#include <QCheckBox>
#include <QColor>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>

namespace tb::widgets {
namespace {

// Tableau 10: distinct on white, and what users of matplotlib already associate with curves.

// Breathing room above and below the data when the y axis follows it (fraction of the span).
constexpr double kRangeMargin = 0.05;
// Room left and right of the data (fraction of the span).
constexpr double kXMargin = 0.01;
// Points each series contributes to the outlier-robust range: enough for stable 2 % quantiles,
// few enough that sorting them costs nothing at a million points.
constexpr int kRangeSamplesPerSeries = 4096;
// Below this many points a series is drawn with a dot on every point (a validation metric
// logged every few hundred steps would otherwise be a handful of bare segments, or nothing).
constexpr int kDotsBelowPoints = 40;
// Most labelled ticks on a logarithmic y axis, and the lines of text each needs.
constexpr int kLogTickCount = 5;
constexpr int kLogTickLines = 3;
// Alpha of the raw curve behind a smoothed one.
constexpr int kRawAlphaWhenSmoothed = 64;
constexpr const char* kRawLayer = "raw";

bool usable(double value, bool logarithmic) {
  return std::isfinite(value) && (!logarithmic || value > 0.0);
}

// Training steps are whole numbers: a tick step below 1 would label steps that do not exist.
class WholeNumberTicker : public QCPAxisTicker {
 protected:
  double getTickStep(const QCPRange& range) override {
    return std::max(1.0, std::round(QCPAxisTicker::getTickStep(range)));
  }
};

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
  // Once the user moves the view, stop following the data; a double click follows it again.
  connect(m_plot, &QCustomPlot::mousePress, this, [this] { followData(false); });
  connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { followData(false); });
  // The wheel scrolls the page; Ctrl+wheel zooms (eventFilter).
  m_plot->installEventFilter(this);
  connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          &CurvePlot::keepXAtOrAboveData);
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { followData(true); });

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

bool CurvePlot::setSeries(const QString& name, const QVector<double>& xs,
                          const QVector<double>& ys) {
  if (xs.size() != ys.size()) {
    return false;
  }
  Series& series = seriesFor(name);
  series.raw->setData(xs, ys);
  series.smoothFromScratch = true;
  recomputeExtremes(series);
  scheduleReplot();
  return true;
}

bool CurvePlot::appendPoints(const QString& name, const QVector<double>& xs,
                             const QVector<double>& ys) {
  if (xs.size() != ys.size()) {
    return false;
  }
  Series& series = seriesFor(name);
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
  noteValues(series, ys);
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
  const Series series = m_series.take(name);
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
  Series& series = seriesFor(name);
  series.color = color;
  series.style = style;
  applyStyle(series);
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
    applyStyle(*it);
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
  Series& series = seriesFor(name);
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
  Series& series = seriesFor(name);
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
  for (Series& series : m_series) {
    series.smoothFromScratch = true;
  }
  scheduleReplot();
}

double CurvePlot::smoothing() const { return m_smoothing; }

void CurvePlot::setIgnoreOutliers(bool ignore) {
  if (ignore != m_ignoreOutliers) {
    m_ignoreOutliers = ignore;
    scheduleReplot();
  }
}

bool CurvePlot::ignoresOutliers() const { return m_ignoreOutliers; }

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

void CurvePlot::setLogX(bool logarithmic) {
  if (logarithmic == isLogX()) {
    return;
  }
  QCPAxis* axis = m_plot->xAxis;
  if (logarithmic) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    axis->setNumberFormat(QStringLiteral("eb"));
    axis->setNumberPrecision(0);
  } else {
    axis->setScaleType(QCPAxis::stLinear);
    m_timeAxis = !m_timeAxis;  // let setTimeAxis() put back the ticker that fits
    setTimeAxis(!m_timeAxis);
  }
  {
    const QSignalBlocker blocker(m_logXToggle);
    m_logXToggle->setChecked(logarithmic);
  }
  for (auto it = m_markers.begin(); it != m_markers.end(); ++it) {
    placeMarker(*it, it->x);
  }
  m_followData = true;
  scheduleReplot();
  Q_EMIT logXChanged(logarithmic);
}

bool CurvePlot::isLogX() const { return m_plot->xAxis->scaleType() == QCPAxis::stLogarithmic; }

void CurvePlot::setTimeAxis(bool duration) {
  if (duration == m_timeAxis) {
    return;
  }
  m_timeAxis = duration;
  if (isLogX()) {
    return;  // the log ticker stays; the choice applies when the axis turns linear again
  }
  QCPAxis* axis = m_plot->xAxis;
  if (duration) {
    auto ticker = QSharedPointer<QCPAxisTickerTime>::create();
    ticker->setTimeFormat(QStringLiteral("%h:%m:%s"));     // hours are not wrapped at 24
    ticker->setFieldWidth(QCPAxisTickerTime::tuHours, 1);  // 0:05:00, not 00:05:00
    ticker->setTickCount(4);  // h:mm:ss labels are wide; a small plot fits four
    axis->setTicker(ticker);
  } else {
    axis->setTicker(m_wholeNumberX ? QSharedPointer<QCPAxisTicker>(new WholeNumberTicker)
                                   : QSharedPointer<QCPAxisTicker>::create());
    axis->setNumberFormat(QStringLiteral("gbd"));
    axis->setNumberPrecision(6);
  }
  m_followData = true;
  scheduleReplot();
}

bool CurvePlot::isTimeAxis() const { return m_timeAxis; }

void CurvePlot::setWholeNumberX(bool whole) {
  if (whole == m_wholeNumberX) return;
  m_wholeNumberX = whole;
  if (!m_timeAxis && !isLogX()) {
    m_timeAxis = true;  // let setTimeAxis() put back the ticker that fits
    setTimeAxis(false);
  }
}

bool CurvePlot::setMarker(const QString& id, double x, const QString& label, const QColor& color,
                          Qt::PenStyle style) {
  auto it = m_markers.find(id);
  if (it == m_markers.end()) {
    if (m_markers.size() >= kMaxMarkers) {
      return false;
    }
    Marker marker;
    marker.line = new QCPItemLine(m_plot);
    marker.line->setLayer(QString::fromLatin1(kRawLayer));
    marker.text = new QCPItemText(m_plot);
    marker.text->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
    marker.text->setPadding(QMargins(3, 2, 3, 2));
    marker.text->setClipToAxisRect(true);
    for (QCPItemPosition* position :
         {marker.line->start, marker.line->end, marker.text->position}) {
      position->setTypeX(QCPItemPosition::ptPlotCoords);
      position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
    it = m_markers.insert(id, marker);
  }
  QPen pen(color);
  pen.setStyle(style);
  pen.setWidthF(1.2);
  it->line->setPen(pen);
  it->text->setText(label);
  it->text->setColor(color.darker(130));
  it->text->setBrush(QColor(255, 255, 255, 200));
  placeMarker(*it, x);
  scheduleReplot();
  return true;
}

bool CurvePlot::removeMarker(const QString& id) {
  const auto it = m_markers.find(id);
  if (it == m_markers.end()) {
    return false;
  }
  m_plot->removeItem(it->line);
  m_plot->removeItem(it->text);
  m_markers.erase(it);
  scheduleReplot();
  return true;
}

void CurvePlot::clearMarkers(const QString& idPrefix) {
  for (const QString& id : m_markers.keys()) {
    if (id.startsWith(idPrefix)) {
      removeMarker(id);
    }
  }
}

QStringList CurvePlot::markerIds() const { return m_markers.keys(); }

std::optional<double> CurvePlot::markerPosition(const QString& id) const {
  const auto it = m_markers.constFind(id);
  if (it == m_markers.cend()) {
    return std::nullopt;
  }
  return it->x;
}

QString CurvePlot::markerLabel(const QString& id) const {
  const auto it = m_markers.constFind(id);
  return it == m_markers.cend() ? QString() : it->text->text();
}

void CurvePlot::setReferenceLine(const QString& id, double y, const QString& label,
                                 const QColor& color) {
  auto it = m_references.find(id);
  if (it == m_references.end()) {
    ReferenceLine reference;
    reference.line = new QCPItemLine(m_plot);
    reference.line->setLayer(QString::fromLatin1(kRawLayer));
    reference.text = new QCPItemText(m_plot);
    reference.text->setPositionAlignment(Qt::AlignBottom | Qt::AlignRight);
    reference.text->setPadding(QMargins(3, 1, 3, 1));
    reference.text->setClipToAxisRect(true);
    for (QCPItemPosition* position :
         {reference.line->start, reference.line->end, reference.text->position}) {
      position->setTypeX(QCPItemPosition::ptAxisRectRatio);
      position->setTypeY(QCPItemPosition::ptPlotCoords);
    }
    it = m_references.insert(id, reference);
  }
  QPen pen(color);
  pen.setStyle(Qt::DashDotLine);
  pen.setWidthF(1.4);
  it->y = y;
  it->line->setPen(pen);
  it->line->start->setCoords(0.0, y);
  it->line->end->setCoords(1.0, y);
  it->text->setText(label);
  it->text->setColor(color.darker(130));
  it->text->setBrush(QColor(255, 255, 255, 200));
  it->text->position->setCoords(0.995, y);
  it->text->setVisible(!label.isEmpty());
  scheduleReplot();
}

bool CurvePlot::removeReferenceLine(const QString& id) {
  const auto it = m_references.find(id);
  if (it == m_references.end()) return false;
  m_plot->removeItem(it->line);
  m_plot->removeItem(it->text);
  m_references.erase(it);
  scheduleReplot();
  return true;
}

std::optional<double> CurvePlot::referenceLineValue(const QString& id) const {
  const auto it = m_references.constFind(id);
  if (it == m_references.cend()) return std::nullopt;
  return it->y;
}

QString CurvePlot::referenceLineLabel(const QString& id) const {
  const auto it = m_references.constFind(id);
  return it == m_references.cend() ? QString() : it->text->text();
}

bool CurvePlot::followsData() const { return m_followData; }

void CurvePlot::setFollowData(bool follow) { followData(follow); }

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
    Series& series = m_series[name];
    updateSmoothed(series);
    applyStyle(series);
  }
  updateLegend();
  if (m_followData && !m_series.isEmpty()) {
    rescaleToData();
  }
  m_plot->replot();
  ++m_replotCount;
  Q_EMIT replotted();
}

CurvePlot::Series& CurvePlot::seriesFor(const QString& name) {
  const auto existing = m_series.find(name);
  if (existing != m_series.end()) {
    return *existing;
  }
  Series series;
  series.raw = m_plot->addGraph();
  series.raw->setName(name);
  series.raw->setLayer(QString::fromLatin1(kRawLayer));
  series.raw->setAdaptiveSampling(true);
  series.color = colours::series(m_colorIndex);
  ++m_colorIndex;
  auto it = m_series.insert(name, series);
  m_order.append(name);
  applyStyle(*it);
  updateLegend();
  return *it;
}

void CurvePlot::noteValues(Series& series, const QVector<double>& ys) {
  for (double y : ys) {
    if (!std::isfinite(y)) {
      continue;
    }
    if (!series.haveFinite) {
      series.minValue = series.maxValue = y;
      series.haveFinite = true;
    } else {
      series.minValue = std::min(series.minValue, y);
      series.maxValue = std::max(series.maxValue, y);
    }
    if (y > 0.0) {
      if (!series.havePositive) {
        series.minPositive = series.maxPositive = y;
        series.havePositive = true;
      } else {
        series.minPositive = std::min(series.minPositive, y);
        series.maxPositive = std::max(series.maxPositive, y);
      }
    }
  }
}

void CurvePlot::recomputeExtremes(Series& series) {
  series.haveFinite = false;
  series.havePositive = false;
  QVector<double> values;
  values.reserve(series.raw->dataCount());
  for (auto it = series.raw->data()->constBegin(); it != series.raw->data()->constEnd(); ++it) {
    values.append(it->value);
  }
  noteValues(series, values);
}

void CurvePlot::applyStyle(Series& series) {
  const bool smoothed = m_smoothing > 0.0 && series.smooth != nullptr;
  const bool dots = series.raw->dataCount() < kDotsBelowPoints;
  QPen main(series.color);
  main.setWidthF(1.6);
  main.setStyle(series.style);
  const QCPScatterStyle dot(QCPScatterStyle::ssDisc, series.color, series.color, 4.0);
  if (smoothed) {
    QColor faint = series.color;
    faint.setAlpha(kRawAlphaWhenSmoothed);
    QPen rawPen(faint);
    rawPen.setWidthF(1.0);
    series.raw->setPen(rawPen);
    series.raw->setScatterStyle(QCPScatterStyle());
    series.smooth->setPen(main);
    series.smooth->setScatterStyle(dots ? dot : QCPScatterStyle());
    series.smooth->setVisible(series.visible);
  } else {
    series.raw->setPen(main);
    series.raw->setScatterStyle(dots ? dot : QCPScatterStyle());
  }
  series.raw->setVisible(series.visible);
}

void CurvePlot::updateSmoothed(Series& series) {
  if (m_smoothing <= 0.0) {
    if (series.smooth != nullptr) {
      m_plot->removeGraph(series.smooth);
      series.smooth = nullptr;
    }
    series.smoothFromScratch = true;
    return;
  }
  if (series.smooth == nullptr) {
    series.smooth = m_plot->addGraph();
    series.smooth->setName(series.raw->name());
    series.smooth->setAdaptiveSampling(true);
    series.smoothFromScratch = true;
  }
  const QSharedPointer<QCPGraphDataContainer> raw = series.raw->data();
  // The slider means as much smoothing for a million points as for a thousand.
  const double weight = EmaSmoother::weightForPoints(m_smoothing, raw->size());
  if (weight != series.ema.weight()) {
    series.smoothFromScratch = true;
  }
  int first = 0;
  if (series.smoothFromScratch) {
    series.smooth->data()->clear();
    series.ema = EmaSmoother(weight);
  } else {
    // Continue the average where the last replot left it: appends cost what they add.
    first = series.smoothedCount;
  }
  QVector<QCPGraphData> points;
  points.reserve(raw->size() - first);
  for (auto it = raw->constBegin() + first; it != raw->constEnd(); ++it) {
    points.append(QCPGraphData(it->key, series.ema.next(it->value)));
  }
  series.smooth->data()->add(points, true);
  series.smoothedCount = raw->size();
  series.smoothFromScratch = false;
}

void CurvePlot::rescaleToData() {
  const bool logX = isLogX();
  const bool logY = isLogY();
  bool haveX = false;
  QCPRange xRange;
  std::optional<ValueRange> yRange;  // in log10 units when logY
  auto unite = [&yRange](ValueRange r) {
    if (!yRange) {
      yRange = r;
    } else {
      yRange->lower = std::min(yRange->lower, r.lower);
      yRange->upper = std::max(yRange->upper, r.upper);
    }
  };
  for (const QString& name : m_order) {
    const Series& series = m_series[name];
    const QSharedPointer<QCPGraphDataContainer> data = series.raw->data();
    if (!series.visible || data->isEmpty()) {
      continue;
    }
    bool found = false;
    const QCPRange keys = data->keyRange(found, logX ? QCP::sdPositive : QCP::sdBoth);
    if (found) {
      xRange =
          haveX ? QCPRange(std::min(xRange.lower, keys.lower), std::max(xRange.upper, keys.upper))
                : keys;
      haveX = true;
    }
    if (logY ? !series.havePositive : !series.haveFinite) {
      continue;
    }
    const ValueRange extremes =
        logY ? ValueRange{std::log10(series.minPositive), std::log10(series.maxPositive)}
             : ValueRange{series.minValue, series.maxValue};
    if (!m_ignoreOutliers) {
      unite(extremes);
      continue;
    }
    // An even sample of the values: quantiles of 4096 points describe a million well enough.
    const int count = data->size();
    const int stride = std::max(1, count / kRangeSamplesPerSeries);
    QVector<double> sample;
    sample.reserve(count / stride + 1);
    for (int i = 0; i < count; i += stride) {
      const double value = (data->constBegin() + i)->value;
      if (usable(value, logY)) {
        sample.append(logY ? std::log10(value) : value);
      }
    }
    if (const std::optional<ValueRange> robust = robustValueRange(sample)) {
      unite(*robust);
    } else {
      unite(extremes);
    }
  }
  if (haveX) {
    // A labelled marker just outside the data (the discriminator's first step, when the GAN
    // curves start right after it) is brought into view with its label.
    const double span = xRange.upper - xRange.lower;
    for (const Marker& marker : m_markers) {
      if (marker.text->text().isEmpty() || (logX && marker.x <= 0.0)) {
        continue;
      }
      if (marker.x < xRange.lower && xRange.lower - marker.x <= 0.1 * span) {
        xRange.lower = marker.x - 0.01 * span;
      } else if (marker.x > xRange.upper && marker.x - xRange.upper <= 0.1 * span) {
        xRange.upper = marker.x + 0.01 * span;
      }
    }
    if (xRange.lower == xRange.upper) {
      xRange = logX ? QCPRange(xRange.lower / 2.0, xRange.upper * 2.0)
                    : QCPRange(xRange.lower - 0.5, xRange.upper + 0.5);
    } else if (!logX) {
      // Room for the dot on a first or last point.
      const double pad = kXMargin * (xRange.upper - xRange.lower);
      xRange = QCPRange(xRange.lower - pad, xRange.upper + pad);
    }
    m_plot->xAxis->setRange(xRange);
  }
  if (yRange) {
    // Reference lines stay in view: the curves are read against them.
    for (const ReferenceLine& reference : m_references) {
      if (usable(reference.y, logY)) {
        const double y = logY ? std::log10(reference.y) : reference.y;
        unite({y, y});
      }
    }
  }
  if (yRange) {
    const double span = yRange->upper - yRange->lower;
    double lower = yRange->lower - kRangeMargin * span;
    double upper = yRange->upper + kRangeMargin * span;
    if (span <= 0.0) {
      // A constant: centre it, a decade (log) or a tenth of its value (linear) either side.
      const double half = logY ? 1.0 : (yRange->upper != 0.0 ? 0.1 * std::abs(yRange->upper) : 1.0);
      lower = yRange->lower - half;
      upper = yRange->upper + half;
    }
    if (logY) {
      lower = std::pow(10.0, lower);
      upper = std::pow(10.0, upper);
    }
    m_plot->yAxis->setRange(lower, upper);
  }
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
    const Series& series = m_series[name];
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
    const Series& series = m_series[name];
    if (series.visible && series.inLegend) {
      widest = std::max(widest, metrics.horizontalAdvance(series.raw->name()));
      ++entries;
    }
  }
  const int itemWidth = widest + m_plot->legend->iconSize().width() +
                        m_plot->legend->iconTextPadding() + m_plot->legend->columnSpacing() + 8;
  return std::clamp(m_plot->width() / std::max(1, itemWidth), 1, std::max(1, entries));
}

void CurvePlot::fitLegendAndTicks() {
  // A logarithmic axis labels its ticks as powers ("10" with a raised exponent), taller than a
  // line of text: on a short plot, fewer of them, so that they never overlap.
  const int lineHeight = QFontMetrics(m_plot->yAxis->tickLabelFont()).height();
  if (isLogY()) {
    const int fit = m_plot->axisRect()->height() / (kLogTickLines * std::max(1, lineHeight));
    m_plot->yAxis->ticker()->setTickCount(std::clamp(fit, 2, kLogTickCount));
  }
  const int columns = legendColumns();
  if (m_plot->legend->wrap() != columns) {
    m_plot->legend->setWrap(columns);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // re-flows the entries
  }
}

void CurvePlot::followData(bool follow) {
  m_followData = follow;
  if (follow) {
    scheduleReplot();
  }
}

bool CurvePlot::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_plot && event->type() == QEvent::Wheel) {
    auto* wheel = static_cast<QWheelEvent*>(event);
    if (!(wheel->modifiers() & Qt::ControlModifier)) {
      scrollPageAround(this, wheel);
      return true;  // no zoom without Ctrl, scrolled or not
    }
  }
  return QWidget::eventFilter(watched, event);
}

void CurvePlot::keepXAtOrAboveData(const QCPRange& range) {
  if (isLogX()) return;
  double first = 0.0;
  bool any = false;
  for (const Series& series : std::as_const(m_series)) {
    if (series.raw->data()->isEmpty()) continue;
    const double key = series.raw->data()->constBegin()->key;
    first = any ? std::min(first, key) : key;
    any = true;
  }
  // Steps and seconds start at 0: zooming or dragging must not show the time before.
  const double floor = std::min(0.0, first) - kXMargin * range.size();
  if (!any || first < 0.0 || range.lower >= floor) return;
  m_plot->xAxis->setRange(floor, floor + range.size());
}

void CurvePlot::placeMarker(Marker& marker, double x) {
  marker.x = x;
  marker.line->start->setCoords(x, 0.0);
  marker.line->end->setCoords(x, 1.0);
  marker.text->position->setCoords(x, 0.0);
  // A logarithmic axis has no place for x <= 0.
  const bool shown = !isLogX() || x > 0.0;
  marker.line->setVisible(shown);
  marker.text->setVisible(shown && !marker.text->text().isEmpty());
}

}  // namespace tb::widgets
