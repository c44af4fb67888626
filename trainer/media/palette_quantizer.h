#pragma once
// PaletteQuantizer: one <= 256-colour palette for a whole clip, for GIF output. Plain C++.

#include <cstdint>
#include <vector>

namespace tb::trainer::media {

/// Builds the palette from every pixel of every frame, then maps frames to palette indices.
/// When the clip has at most maxColors distinct colours the palette is exactly those colours
/// and mapping is lossless (exact() is true). Otherwise the palette is a median cut of the
/// clip's colour histogram (5 bits per channel boxes, each colour the mean of its pixels), and
/// mapping picks the nearest colour after an optional 4x4 ordered (Bayer) dither, which trades
/// banding in gradients for a fine, stable pattern (stable across frames, unlike error diffusion).
class PaletteQuantizer {
 public:
  /// `rgb`: `pixelCount` RGB24 pixels (any number of frames back to back). maxColors in [2, 256].
  PaletteQuantizer(const uint8_t* rgb, std::size_t pixelCount, int maxColors = 256);

  bool exact() const { return m_exact; }
  /// Palette colours as RGB triples; size() / 3 entries.
  const std::vector<uint8_t>& colours() const { return m_colours; }
  int size() const { return static_cast<int>(m_colours.size() / 3); }

  /// Maps one width x height RGB24 frame to palette indices (width * height bytes).
  void map(const uint8_t* rgb, int width, int height, bool dither, uint8_t* indices);

 private:
  int nearest(int r, int g, int b) const;
  int cachedNearest(int r, int g, int b);

  bool m_exact = false;
  std::vector<uint8_t> m_colours;
  std::vector<uint32_t> m_exactKeys;  // sorted 0xRRGGBB of the exact palette
  std::vector<uint8_t> m_exactIndex;  // palette index of m_exactKeys[i]
  std::vector<int16_t> m_cache;       // nearest index per 6-bit-per-channel cell, -1 = unknown
};

}  // namespace tb::trainer::media
