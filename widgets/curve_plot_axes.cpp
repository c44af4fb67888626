// CurvePlot's axes: linear, logarithmic or duration scales and their tickers, and the ranges
// shown while the plot follows the data (the bulk of the values when it ignores outliers, with
// the reference lines and the labelled markers near the data in view).

#include "widgets/curve_plot.h"

#include "widgets/qcustomplot_no_keywords.h"

#include <QCheckBox>

#include <algorithm>
#include <cmath>

namespace tb::widgets {
namespace {

// Breathing room above and below the data when the y axis follows it (fraction of the span).
constexpr double kRangeMargin = 0.05;
// Room left and right of the data (fraction of the span).
constexpr double kXMargin = 0.01;
// Most labelled ticks on a logarithmic y axis, and the lines of text each needs.
constexpr int kLogTickCount = 5;
constexpr int kLogTickLines = 3;

// Training steps are whole numbers: a tick step below 1 would label steps that do not exist.
class WholeNumberTicker : public QCPAxisTicker {
 protected:
  double getTickStep(const QCPRange& range) override {
    return std::max(1.0, std::round(QCPAxisTicker::getTickStep(range)));
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Scales and ticks

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
  m_annotations->placeMarkers();
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

void CurvePlot::fitLogTicks() {
  // A logarithmic axis labels its ticks as powers ("10" with a raised exponent), taller than a
  // line of text: on a short plot, fewer of them, so that they never overlap.
  const int lineHeight = QFontMetrics(m_plot->yAxis->tickLabelFont()).height();
  if (isLogY()) {
    const int fit = m_plot->axisRect()->height() / (kLogTickLines * std::max(1, lineHeight));
    m_plot->yAxis->ticker()->setTickCount(std::clamp(fit, 2, kLogTickCount));
  }
}

// ---------------------------------------------------------------------------------------------
// Ranges

void CurvePlot::setIgnoreOutliers(bool ignore) {
  if (ignore != m_ignoreOutliers) {
    m_ignoreOutliers = ignore;
    scheduleReplot();
  }
}

bool CurvePlot::ignoresOutliers() const { return m_ignoreOutliers; }

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
    const CurveSeries& series = m_series[name];
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
    if (const std::optional<ValueRange> values = series.valueRange(logY, m_ignoreOutliers)) {
      unite(*values);
    }
  }
  if (haveX) {
    // A labelled marker just outside the data (the discriminator's first step, when the GAN
    // curves start right after it) is brought into view with its label.
    m_annotations->widenToLabelledMarkers(xRange, logX);
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
    for (const double reference : m_annotations->referenceValues()) {
      if (isDrawable(reference, logY)) {
        const double y = logY ? std::log10(reference) : reference;
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

void CurvePlot::keepXAtOrAboveData(const QCPRange& range) {
  if (isLogX()) return;
  double first = 0.0;
  bool any = false;
  for (const CurveSeries& series : std::as_const(m_series)) {
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

}  // namespace tb::widgets
