#pragma once
// VideoFrames: decoded frames as one plain byte buffer, so media code stays torch-free.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tb::trainer::media {

/// `count` frames of `width` x `height` RGB24 pixels.
/// Layout of `rgb`: [count, height, width, 3], uint8 in [0, 255], row-major, no padding,
/// frames contiguous: pixel (t, y, x) channel c is rgb[((t * height + y) * width + x) * 3 + c].
/// A still image is a VideoFrames with count == 1 (fps 0).
struct VideoFrames {
  int width = 0;
  int height = 0;
  int count = 0;
  double fps = 0.0;  ///< frames per second of the source (or to encode at)
  std::vector<uint8_t> rgb;

  std::size_t frameBytes() const { return static_cast<std::size_t>(width) * height * 3; }
  const uint8_t* frame(int t) const { return rgb.data() + frameBytes() * t; }
  uint8_t* frame(int t) { return rgb.data() + frameBytes() * t; }
  /// True when rgb holds exactly count frames of width x height.
  bool consistent() const {
    return width >= 0 && height >= 0 && count >= 0 && rgb.size() == frameBytes() * count;
  }
};

}  // namespace tb::trainer::media
