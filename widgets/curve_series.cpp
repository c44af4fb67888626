#include "widgets/curve_series.h"

#include "widgets/qcustomplot_no_keywords.h"

#include <algorithm>
#include <cmath>

namespace tb::widgets {
namespace {

// Points each series contributes to the outlier-robust range: enough for stable 2 % quantiles,
// few enough that sorting them costs nothing at a million points.
constexpr int kRangeSamplesPerSeries = 4096;
// Below this many points a series is drawn with a dot on every point (a validation metric
// logged every few hundred steps would otherwise be a handful of bare segments, or nothing).
constexpr int kDotsBelowPoints = 40;
// Alpha of the raw curve behind a smoothed one.
constexpr int kRawAlphaWhenSmoothed = 64;

}  // namespace

bool isDrawable(double value, bool logarithmic) {
  return std::isfinite(value) && (!logarithmic || value > 0.0);
}

void CurveSeries::noteValues(const QVector<double>& ys) {
  for (double y : ys) {
    if (!std::isfinite(y)) {
      continue;
    }
    if (!haveFinite) {
      minValue = maxValue = y;
      haveFinite = true;
    } else {
      minValue = std::min(minValue, y);
      maxValue = std::max(maxValue, y);
    }
    if (y > 0.0) {
      if (!havePositive) {
        minPositive = maxPositive = y;
        havePositive = true;
      } else {
        minPositive = std::min(minPositive, y);
        maxPositive = std::max(maxPositive, y);
      }
    }
  }
}

void CurveSeries::recomputeExtremes() {
  haveFinite = false;
  havePositive = false;
  QVector<double> values;
  values.reserve(raw->dataCount());
  for (auto it = raw->data()->constBegin(); it != raw->data()->constEnd(); ++it) {
    values.append(it->value);
  }
  noteValues(values);
}

void CurveSeries::applyStyle(double smoothing) {
  const bool smoothed = smoothing > 0.0 && smooth != nullptr;
  const bool dots = raw->dataCount() < kDotsBelowPoints;
  QPen main(color);
  main.setWidthF(1.6);
  main.setStyle(style);
  const QCPScatterStyle dot(QCPScatterStyle::ssDisc, color, color, 4.0);
  if (smoothed) {
    QColor faint = color;
    faint.setAlpha(kRawAlphaWhenSmoothed);
    QPen rawPen(faint);
    rawPen.setWidthF(1.0);
    raw->setPen(rawPen);
    raw->setScatterStyle(QCPScatterStyle());
    smooth->setPen(main);
    smooth->setScatterStyle(dots ? dot : QCPScatterStyle());
    smooth->setVisible(visible);
  } else {
    raw->setPen(main);
    raw->setScatterStyle(dots ? dot : QCPScatterStyle());
  }
  raw->setVisible(visible);
}

void CurveSeries::updateSmoothed(QCustomPlot* plot, double smoothing) {
  if (smoothing <= 0.0) {
    if (smooth != nullptr) {
      plot->removeGraph(smooth);
      smooth = nullptr;
    }
    smoothFromScratch = true;
    return;
  }
  if (smooth == nullptr) {
    smooth = plot->addGraph();
    smooth->setName(raw->name());
    smooth->setAdaptiveSampling(true);
    smoothFromScratch = true;
  }
  const QSharedPointer<QCPGraphDataContainer> rawData = raw->data();
  // The slider means as much smoothing for a million points as for a thousand.
  const double weight = EmaSmoother::weightForPoints(smoothing, rawData->size());
  if (weight != ema.weight()) {
    smoothFromScratch = true;
  }
  int first = 0;
  if (smoothFromScratch) {
    smooth->data()->clear();
    ema = EmaSmoother(weight);
  } else {
    // Continue the average where the last replot left it: appends cost what they add.
    first = smoothedCount;
  }
  QVector<QCPGraphData> points;
  points.reserve(rawData->size() - first);
  for (auto it = rawData->constBegin() + first; it != rawData->constEnd(); ++it) {
    points.append(QCPGraphData(it->key, ema.next(it->value)));
  }
  smooth->data()->add(points, true);
  smoothedCount = rawData->size();
  smoothFromScratch = false;
}

std::optional<ValueRange> CurveSeries::valueRange(bool logY, bool ignoreOutliers) const {
  if (logY ? !havePositive : !haveFinite) {
    return std::nullopt;
  }
  const ValueRange extremes = logY ? ValueRange{std::log10(minPositive), std::log10(maxPositive)}
                                   : ValueRange{minValue, maxValue};
  if (!ignoreOutliers) {
    return extremes;
  }
  // An even sample of the values: quantiles of 4096 points describe a million well enough.
  const QSharedPointer<QCPGraphDataContainer> data = raw->data();
  const int count = data->size();
  const int stride = std::max(1, count / kRangeSamplesPerSeries);
  QVector<double> sample;
  sample.reserve(count / stride + 1);
  for (int i = 0; i < count; i += stride) {
    const double value = (data->constBegin() + i)->value;
    if (isDrawable(value, logY)) {
      sample.append(logY ? std::log10(value) : value);
    }
  }
  if (const std::optional<ValueRange> robust = robustValueRange(sample)) {
    return robust;
  }
  return extremes;
}

}  // namespace tb::widgets
