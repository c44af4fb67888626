#include "widgets/curve_smoothing.h"

#include <algorithm>
#include <cmath>

namespace tb::widgets {

EmaSmoother::EmaSmoother(double weight)
    : m_weight(std::isfinite(weight) ? std::clamp(weight, 0.0, kMaxWeight) : 0.0) {}

double EmaSmoother::weightForPoints(double weight, int points) {
  if (points <= kReferencePoints || weight <= 0.0) {
    return weight;
  }
  int bucket = kReferencePoints;
  while (bucket < points && bucket < (1 << 30)) {
    bucket *= 2;
  }
  return std::pow(weight, static_cast<double>(kReferencePoints) / bucket);
}

double EmaSmoother::next(double y) {
  if (!std::isfinite(y)) {
    return y;
  }
  m_last = m_last * m_weight + (1.0 - m_weight) * y;
  m_weightPower *= m_weight;
  ++m_count;
  const double debias = 1.0 - m_weightPower;
  return debias > 0.0 ? m_last / debias : y;
}

void EmaSmoother::reset() {
  m_last = 0.0;
  m_weightPower = 1.0;
  m_count = 0;
}

QVector<double> EmaSmoother::smooth(const QVector<double>& values, double weight) {
  EmaSmoother smoother(weight);
  QVector<double> out;
  out.reserve(values.size());
  for (double y : values) {
    out.append(smoother.next(y));
  }
  return out;
}

}  // namespace tb::widgets
