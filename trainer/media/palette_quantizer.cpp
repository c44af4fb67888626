#include "trainer/media/palette_quantizer.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace tb::trainer::media {

namespace {

constexpr int kBins = 32 * 32 * 32;

struct Bin {
  uint64_t count = 0;
  uint64_t sum[3] = {0, 0, 0};
};

int binOf(const uint8_t* p) { return ((p[0] >> 3) << 10) | ((p[1] >> 3) << 5) | (p[2] >> 3); }
int binChannel(int bin, int c) { return (bin >> (10 - 5 * c)) & 31; }

struct Box {
  std::vector<int> bins;  // non-empty histogram bins inside the box
  uint64_t count = 0;
  int lo[3] = {31, 31, 31};
  int hi[3] = {0, 0, 0};

  void fit(const std::vector<Bin>& hist) {
    count = 0;
    for (int c = 0; c < 3; ++c) lo[c] = 31, hi[c] = 0;
    for (int b : bins) {
      count += hist[b].count;
      for (int c = 0; c < 3; ++c) {
        lo[c] = std::min(lo[c], binChannel(b, c));
        hi[c] = std::max(hi[c], binChannel(b, c));
      }
    }
  }
  int longestAxis() const {
    int axis = 0;
    for (int c = 1; c < 3; ++c)
      if (hi[c] - lo[c] > hi[axis] - lo[axis]) axis = c;
    return axis;
  }
  int range() const { return hi[longestAxis()] - lo[longestAxis()]; }
};

// 4x4 Bayer thresholds, 0..15.
constexpr int kBayer[4][4] = {{0, 8, 2, 10}, {12, 4, 14, 6}, {3, 11, 1, 9}, {15, 7, 13, 5}};
constexpr int kDitherSpread = 12;  // peak-to-peak dither amplitude in 8-bit levels

uint8_t clampByte(int v) { return static_cast<uint8_t>(std::clamp(v, 0, 255)); }

}  // namespace

PaletteQuantizer::PaletteQuantizer(const uint8_t* rgb, std::size_t pixelCount, int maxColors) {
  if (maxColors < 2 || maxColors > 256)
    throw std::invalid_argument("PaletteQuantizer: maxColors must be in [2, 256]");
  // Exact palette when the clip has few colours (flat graphics, test patterns): lossless GIFs.
  std::unordered_set<uint32_t> distinct;
  bool few = true;
  for (std::size_t i = 0; i < pixelCount && few; ++i) {
    const uint8_t* p = rgb + 3 * i;
    distinct.insert((uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | p[2]);
    few = static_cast<int>(distinct.size()) <= maxColors;
  }
  if (few) {
    m_exact = true;
    std::vector<uint32_t> keys(distinct.begin(), distinct.end());
    std::sort(keys.begin(), keys.end());
    m_exactKeys = keys;
    if (keys.empty()) keys.push_back(0);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      m_colours.push_back(static_cast<uint8_t>(keys[i] >> 16));
      m_colours.push_back(static_cast<uint8_t>(keys[i] >> 8));
      m_colours.push_back(static_cast<uint8_t>(keys[i]));
      m_exactIndex.push_back(static_cast<uint8_t>(i));
    }
    return;
  }

  std::vector<Bin> hist(kBins);
  for (std::size_t i = 0; i < pixelCount; ++i) {
    const uint8_t* p = rgb + 3 * i;
    Bin& bin = hist[binOf(p)];
    ++bin.count;
    for (int c = 0; c < 3; ++c) bin.sum[c] += p[c];
  }
  std::vector<Box> boxes(1);
  for (int b = 0; b < kBins; ++b)
    if (hist[b].count) boxes[0].bins.push_back(b);
  boxes[0].fit(hist);
  while (static_cast<int>(boxes.size()) < maxColors) {
    // Split the box where the most pixels sit far apart: population times extent.
    int pick = -1;
    double best = 0;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      if (boxes[i].bins.size() < 2) continue;
      const double score = static_cast<double>(boxes[i].count) * (boxes[i].range() + 1);
      if (score > best) best = score, pick = static_cast<int>(i);
    }
    if (pick < 0) break;
    Box& box = boxes[pick];
    const int axis = box.longestAxis();
    std::sort(box.bins.begin(), box.bins.end(),
              [axis](int a, int b) { return binChannel(a, axis) < binChannel(b, axis); });
    // Weighted median, keeping at least one bin on each side.
    uint64_t acc = 0;
    std::size_t cut = 1;
    for (std::size_t i = 0; i + 1 < box.bins.size(); ++i) {
      acc += hist[box.bins[i]].count;
      cut = i + 1;
      if (acc * 2 >= box.count) break;
    }
    Box upper;
    upper.bins.assign(box.bins.begin() + static_cast<std::ptrdiff_t>(cut), box.bins.end());
    box.bins.resize(cut);
    box.fit(hist);
    upper.fit(hist);
    boxes.push_back(std::move(upper));
  }
  for (const Box& box : boxes) {
    uint64_t sum[3] = {0, 0, 0};
    for (int b : box.bins)
      for (int c = 0; c < 3; ++c) sum[c] += hist[b].sum[c];
    for (int c = 0; c < 3; ++c)
      m_colours.push_back(
          static_cast<uint8_t>((sum[c] + box.count / 2) / std::max<uint64_t>(box.count, 1)));
  }
  m_cache.assign(1 << 18, -1);
}

int PaletteQuantizer::nearest(int r, int g, int b) const {
  int best = 0;
  int bestDistance = std::numeric_limits<int>::max();
  for (int i = 0; i < size(); ++i) {
    const int dr = r - m_colours[3 * i], dg = g - m_colours[3 * i + 1],
              db = b - m_colours[3 * i + 2];
    // Weights approximate the eye's sensitivity (green > red > blue).
    const int distance = 3 * dr * dr + 4 * dg * dg + 2 * db * db;
    if (distance < bestDistance) bestDistance = distance, best = i;
  }
  return best;
}

int PaletteQuantizer::cachedNearest(int r, int g, int b) {
  const int key = ((r >> 2) << 12) | ((g >> 2) << 6) | (b >> 2);
  int16_t& slot = m_cache[static_cast<std::size_t>(key)];
  if (slot < 0) slot = static_cast<int16_t>(nearest((r & ~3) + 2, (g & ~3) + 2, (b & ~3) + 2));
  return slot;
}

void PaletteQuantizer::map(const uint8_t* rgb, int width, int height, bool dither,
                           uint8_t* indices) {
  const std::size_t n = static_cast<std::size_t>(width) * height;
  if (m_exact) {
    for (std::size_t i = 0; i < n; ++i) {
      const uint8_t* p = rgb + 3 * i;
      const uint32_t key = (uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | p[2];
      const auto it = std::lower_bound(m_exactKeys.begin(), m_exactKeys.end(), key);
      if (it != m_exactKeys.end() && *it == key) {
        indices[i] = m_exactIndex[static_cast<std::size_t>(it - m_exactKeys.begin())];
      } else {  // a frame that was not part of the palette's input
        indices[i] = static_cast<uint8_t>(nearest(p[0], p[1], p[2]));
      }
    }
    return;
  }
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * width + x;
      const uint8_t* p = rgb + 3 * i;
      int offset = 0;
      if (dither)
        offset = ((2 * kBayer[y & 3][x & 3] + 1) * kDitherSpread) / 32 - kDitherSpread / 2;
      indices[i] = static_cast<uint8_t>(cachedNearest(
          clampByte(p[0] + offset), clampByte(p[1] + offset), clampByte(p[2] + offset)));
    }
  }
}

}  // namespace tb::trainer::media
