#pragma once
// ImageReader: still images (jpg, png, webp, bmp, ... whatever OpenCV imgcodecs reads) to RGB24,
// and an atomic PNG writer.

#include "trainer/media/video_frames.h"

#include <string>

namespace tb::trainer::media {

/// Reads image files as 1-frame VideoFrames (count 1, fps 0), RGB24:
/// - OpenCV's BGR order is converted to RGB;
/// - grayscale is expanded to three equal channels;
/// - an alpha channel is composited over black: c' = round(c * a / max), i.e. transparent
///   pixels become black and opaque ones keep their colour;
/// - 16-bit images are scaled to 8 bits (v' = round(v / 257), so 65535 -> 255);
///   32-bit float images are taken as [0, 1] and scaled by 255.
/// Errors throw MediaError naming the file ("no such file", "cannot decode image ...").
class ImageReader {
 public:
  static VideoFrames read(const std::string& path);
};

/// Writes `rgb` (width * height * 3 bytes, RGB24, row-major) as a PNG, atomically
/// (temporary file in the same folder, then rename). Throws MediaError naming `path`.
void writePng(const std::string& path, int width, int height, const uint8_t* rgb);

}  // namespace tb::trainer::media
