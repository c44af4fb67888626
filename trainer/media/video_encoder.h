#pragma once
// VideoEncoder: writes RGB24 frames to a video file (mp4/mov/m4v, mkv, avi, webm, ogv, gif),
// atomically: into a temporary file in the target's folder, renamed over the target by finish().

#include "trainer/media/video_frames.h"

#include <memory>
#include <string>

namespace tb::trainer::media {

enum class VideoCodec {
  Auto,    ///< by extension: mp4/mov/m4v -> H264, mkv -> Ffv1, avi -> Mpeg4, webm -> Vp9,
           ///< ogv -> Theora, mpg/mpeg -> Mpeg2, gif -> Gif
  H264,    ///< libx264, yuv420p; falls back to Mpeg4 when libavcodec has no libx264
  Mpeg4,   ///< MPEG-4 part 2, yuv420p
  Mpeg2,   ///< MPEG-2, yuv420p (standard frame rates only: 24, 25, 30, 50, 60, NTSC rates)
  Vp9,     ///< libvpx-vp9 (else libvpx VP8), yuv420p
  Theora,  ///< libtheora, yuv420p
  Ffv1,    ///< FFV1 on 8-bit RGB: lossless, decode(encode(x)) == x bit for bit (use .mkv/.avi)
  Gif,     ///< 256-colour palette per file (PaletteQuantizer), optional ordered dither
};

struct VideoEncoderOptions {
  VideoCodec codec = VideoCodec::Auto;
  /// Codec quality, lower is better: CRF for H264 (default 18) and Vp9 (default 30),
  /// qscale 1..31 for Mpeg4/Mpeg2 (default 3), 0..10 (higher is better) for Theora (default 8).
  /// -1: the default. Ignored by Ffv1 and Gif.
  int quality = -1;
  int gopSize = 0;        ///< frames between keyframes; 0: the codec's default
  int threads = 1;        ///< encoder threads
  bool gifDither = true;  ///< ordered dither when the clip has more than 256 colours
};

/// Streams frames into one file. The temporary file is removed if finish() is not reached
/// (destruction, exception); the target is never left half-written. Errors throw MediaError
/// naming the target path. Codecs on yuv420p need even width and height.
class VideoEncoder {
 public:
  VideoEncoder(std::string path, int width, int height, double fps,
               VideoEncoderOptions options = {});
  ~VideoEncoder();
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;

  /// One RGB24 frame, width * height * 3 bytes, row-major. GIF frames are buffered until
  /// finish(), which needs all of them to build the palette.
  void addFrame(const uint8_t* rgb);
  /// Flushes the encoder, writes the trailer and renames the file into place.
  void finish();
  /// The encoder actually used, e.g. "libx264", "mpeg4", "ffv1", "gif".
  std::string encoderName() const;

 private:
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

/// Encodes all of `frames` (at frames.fps) to `path`.
void writeVideo(const std::string& path, const VideoFrames& frames,
                VideoEncoderOptions options = {});

}  // namespace tb::trainer::media
