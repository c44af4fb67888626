#include "trainer/evaluation/image_metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace tb::trainer::metrics {
namespace {

constexpr int kRadius = 5;  // 11-tap window; also the border dropped from the SSIM map
constexpr int kTaps = 2 * kRadius + 1;
constexpr double kSigma = 1.5;
constexpr double kC1 = (0.01 * 255.0) * (0.01 * 255.0);
constexpr double kC2 = (0.03 * 255.0) * (0.03 * 255.0);

std::array<double, kTaps> gaussianWindow() {
  std::array<double, kTaps> w{};
  double sum = 0.0;
  for (int i = 0; i < kTaps; ++i) {
    const double x = i - kRadius;
    w[i] = std::exp(-0.5 * x * x / (kSigma * kSigma));
    sum += w[i];
  }
  for (double& v : w) v /= sum;
  return w;
}

std::string sizeText(const media::VideoFrames& f) {
  return std::to_string(f.width) + "x" + std::to_string(f.height) + "x" + std::to_string(f.count);
}

/// Gaussian-filtered image, only where the window fits entirely (the pixels the border crop
/// keeps): out is (width - 10) x (height - 10), so no boundary mode is involved.
/// Separable: rows first into `tmp` (width - 10) x height, then columns.
void filterValid(const std::vector<double>& in, int width, int height,
                 const std::array<double, kTaps>& w, std::vector<double>& tmp,
                 std::vector<double>& out) {
  const int ow = width - 2 * kRadius;
  const int oh = height - 2 * kRadius;
  tmp.assign(static_cast<std::size_t>(ow) * height, 0.0);
  for (int y = 0; y < height; ++y) {
    const double* row = in.data() + static_cast<std::size_t>(y) * width;
    double* dst = tmp.data() + static_cast<std::size_t>(y) * ow;
    for (int x = 0; x < ow; ++x) {
      double s = 0.0;
      for (int k = 0; k < kTaps; ++k) s += w[k] * row[x + k];
      dst[x] = s;
    }
  }
  out.assign(static_cast<std::size_t>(ow) * oh, 0.0);
  for (int y = 0; y < oh; ++y) {
    double* dst = out.data() + static_cast<std::size_t>(y) * ow;
    for (int k = 0; k < kTaps; ++k) {
      const double* src = tmp.data() + static_cast<std::size_t>(y + k) * ow;
      for (int x = 0; x < ow; ++x) dst[x] += w[k] * src[x];
    }
  }
}

}  // namespace

void checkComparable(const media::VideoFrames& a, const media::VideoFrames& b) {
  if (!a.consistent() || !b.consistent()) {
    throw std::invalid_argument(
        "frames are inconsistent: rgb size does not match width x height x count");
  }
  if (a.width != b.width || a.height != b.height || a.count != b.count) {
    throw std::invalid_argument("frames differ in size or count: " + sizeText(a) + " vs " +
                                sizeText(b) + " (width x height x frames)");
  }
  if (a.count == 0 || a.width == 0 || a.height == 0)
    throw std::invalid_argument("no pixels to compare");
}

double framePsnr(const uint8_t* a, const uint8_t* b, int width, int height) {
  const std::size_t n = static_cast<std::size_t>(width) * height * 3;
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    sum += d * d;
  }
  const double mse = sum / static_cast<double>(n);
  if (mse == 0.0) return kPsnrMax;
  return std::min(kPsnrMax, 10.0 * std::log10(255.0 * 255.0 / mse));
}

double frameSsim(const uint8_t* a, const uint8_t* b, int width, int height) {
  if (width < kTaps || height < kTaps) {
    throw std::invalid_argument("ssim needs frames of at least 11x11 pixels, got " +
                                std::to_string(width) + "x" + std::to_string(height));
  }
  static const std::array<double, kTaps> w = gaussianWindow();
  const std::size_t n = static_cast<std::size_t>(width) * height;
  std::vector<double> x(n), y(n), xx(n), yy(n), xy(n), tmp;
  std::vector<double> mx, my, mxx, myy, mxy;
  double total = 0.0;
  for (int c = 0; c < 3; ++c) {
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = a[i * 3 + c];
      y[i] = b[i * 3 + c];
      xx[i] = x[i] * x[i];
      yy[i] = y[i] * y[i];
      xy[i] = x[i] * y[i];
    }
    filterValid(x, width, height, w, tmp, mx);
    filterValid(y, width, height, w, tmp, my);
    filterValid(xx, width, height, w, tmp, mxx);
    filterValid(yy, width, height, w, tmp, myy);
    filterValid(xy, width, height, w, tmp, mxy);
    double sum = 0.0;
    for (std::size_t i = 0; i < mx.size(); ++i) {
      const double ux = mx[i], uy = my[i];
      const double vx = mxx[i] - ux * ux;
      const double vy = myy[i] - uy * uy;
      const double vxy = mxy[i] - ux * uy;
      sum += ((2.0 * ux * uy + kC1) * (2.0 * vxy + kC2)) /
             ((ux * ux + uy * uy + kC1) * (vx + vy + kC2));
    }
    total += sum / static_cast<double>(mx.size());
  }
  return total / 3.0;
}

double psnr(const media::VideoFrames& a, const media::VideoFrames& b) {
  checkComparable(a, b);
  double sum = 0.0;
  for (int t = 0; t < a.count; ++t) sum += framePsnr(a.frame(t), b.frame(t), a.width, a.height);
  return sum / a.count;
}

double ssim(const media::VideoFrames& a, const media::VideoFrames& b) {
  checkComparable(a, b);
  double sum = 0.0;
  for (int t = 0; t < a.count; ++t) sum += frameSsim(a.frame(t), b.frame(t), a.width, a.height);
  return sum / a.count;
}

}  // namespace tb::trainer::metrics
