#include "widgets/difference_map.h"

#include <QColor>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

namespace tb::widgets {
namespace {

// matplotlib's inferno at t = 0, 1/8, ..., 1; linear interpolation between stops is close to
// the 256-entry table for a heatmap legend.
constexpr std::array<QRgb, 9> kInferno = {0x000004, 0x1f0c48, 0x550f6d, 0x88226a, 0xba3655,
                                          0xe35933, 0xf98e09, 0xf8c932, 0xfcffa4};

}  // namespace

QRgb infernoColor(double t) {
  if (!(t > 0)) t = 0;  // also NaN
  if (t > 1) t = 1;
  const double position = t * (kInferno.size() - 1);
  const int i = std::min(static_cast<int>(position), static_cast<int>(kInferno.size()) - 2);
  const double f = position - i;
  const QRgb a = kInferno[static_cast<size_t>(i)];
  const QRgb b = kInferno[static_cast<size_t>(i) + 1];
  auto mix = [f](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * f)); };
  return qRgb(mix(qRed(a), qRed(b)), mix(qGreen(a), qGreen(b)), mix(qBlue(a), qBlue(b)));
}

QVector<float> meanAbsoluteDifference(const QImage& original, const QImage& reconstruction) {
  if (original.isNull() || original.size() != reconstruction.size()) return {};
  const QImage a = original.convertToFormat(QImage::Format_RGB32);
  const QImage b = reconstruction.convertToFormat(QImage::Format_RGB32);
  QVector<float> out(static_cast<qsizetype>(a.width()) * a.height());
  float* value = out.data();
  for (int y = 0; y < a.height(); ++y) {
    const auto* pa = reinterpret_cast<const QRgb*>(a.constScanLine(y));
    const auto* pb = reinterpret_cast<const QRgb*>(b.constScanLine(y));
    for (int x = 0; x < a.width(); ++x) {
      const int sum = std::abs(qRed(pa[x]) - qRed(pb[x])) +
                      std::abs(qGreen(pa[x]) - qGreen(pb[x])) +
                      std::abs(qBlue(pa[x]) - qBlue(pb[x]));
      *value++ = static_cast<float>(sum) / 3.0f;
    }
  }
  return out;
}

double maxMeanAbsoluteDifference(const ClipFrames& original, const ClipFrames& reconstruction) {
  double largest = 0;
  const qsizetype n = std::min(original.size(), reconstruction.size());
  for (qsizetype t = 0; t < n; ++t) {
    const QVector<float> d = meanAbsoluteDifference(original[t], reconstruction[t]);
    if (!d.isEmpty()) largest = std::max(largest, double(*std::max_element(d.begin(), d.end())));
  }
  return largest;
}

double roundScaleMax(double value) {
  for (double candidate : {4.0, 8.0, 16.0, 32.0, 64.0, 128.0}) {
    if (value <= candidate) return candidate;
  }
  return 255.0;
}

QImage differenceImage(const QImage& original, const QImage& reconstruction, double scaleMax) {
  if (original.isNull() || original.size() != reconstruction.size()) return {};
  const QImage a = original.convertToFormat(QImage::Format_RGB32);
  const QImage b = reconstruction.convertToFormat(QImage::Format_RGB32);
  const double scale = scaleMax > 0 ? scaleMax : 255.0;
  // The sum of three absolute 8-bit differences takes 766 values: colour each once.
  std::array<QRgb, 766> lut{};
  for (size_t sum = 0; sum < lut.size(); ++sum) {
    lut[sum] = infernoColor(static_cast<double>(sum) / 3.0 / scale);
  }
  QImage image(a.size(), QImage::Format_RGB32);
  for (int y = 0; y < a.height(); ++y) {
    const auto* pa = reinterpret_cast<const QRgb*>(a.constScanLine(y));
    const auto* pb = reinterpret_cast<const QRgb*>(b.constScanLine(y));
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
    for (int x = 0; x < a.width(); ++x) {
      const int sum = std::abs(qRed(pa[x]) - qRed(pb[x])) +
                      std::abs(qGreen(pa[x]) - qGreen(pb[x])) +
                      std::abs(qBlue(pa[x]) - qBlue(pb[x]));
      line[x] = lut[static_cast<size_t>(sum)];
    }
  }
  return image;
}

ClipFrames differenceFrames(const ClipFrames& original, const ClipFrames& reconstruction,
                            double scaleMax) {
  ClipFrames out;
  if (original.isEmpty()) return out;
  out.reserve(reconstruction.size());
  for (qsizetype t = 0; t < reconstruction.size(); ++t) {
    out.append(
        differenceImage(original[std::min(t, original.size() - 1)], reconstruction[t], scaleMax));
  }
  return out;
}

}  // namespace tb::widgets
