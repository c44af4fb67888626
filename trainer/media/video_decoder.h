#pragma once
// VideoDecoder: probes and decodes any video file FFmpeg can demux and decode
// (mp4, mov, m4v, avi, mkv, webm, ogv, mpg, gif, ...) into RGB24 VideoFrames.

#include "trainer/media/video_frames.h"

#include <memory>
#include <optional>
#include <string>

namespace tb::trainer::media {

/// What the file says about its video stream (the first "best" video stream).
struct VideoInfo {
  int width = 0;  ///< coded picture size in pixels
  int height = 0;
  /// Exact number of frames, counted by demuxing every packet of the stream (one frame per
  /// packet, true for every codec this layer writes), at most the container's count when it
  /// stores one (mp4, mov, avi). A file with gaps in its timestamps (an avi with dropped frames)
  /// has fewer frames than its length in frame periods; they are numbered in order. Never 0
  /// (the constructor throws).
  int frameCount = 0;
  bool frameCountCounted = false;  ///< true when the container stores no count (mkv, webm, gif)
  /// Timestamps that do not number the frames: fewer frames than the header's length in frame
  /// periods, spread over all of it (an avi with dropped frames), or two frames on one frame
  /// period (timestamps rounded down by a muxer). Frames are numbered in order, never found by
  /// timestamp.
  bool sparseTimestamps = false;
  double fps = 0.0;              ///< nominal frame rate (FFmpeg's av_guess_frame_rate)
  double durationSeconds = 0.0;  ///< container duration, else frameCount / fps
  std::string codecName;         ///< e.g. "h264", "ffv1", "gif"
  std::string formatName;        ///< demuxer, e.g. "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm"
  /// Non-empty when the file is readable but damaged: its packets stop before the frame count
  /// or duration its header states ("truncated: got 7 of 16 frames ..."). Durations are checked
  /// only for single-stream files whose duration is not a bitrate estimate.
  std::string warning;
};

/// What probing a file found about its frames (a dataset index keeps it).
struct KnownFrames {
  int frameCount = 0;
  bool sparseTimestamps = false;
};

struct VideoDecoderOptions {
  /// The file's frames as an earlier probe found them: opening it for one clip then trusts them
  /// instead of demuxing the whole file again. Unset: probe (count every packet).
  std::optional<KnownFrames> known;
  int threads = 1;  ///< decoder threads for this file; 1 because loaders parallelise across files
  /// Upper bound on the wall time of one open or decode call; an input that stalls FFmpeg past
  /// it fails with MediaError "timed out" instead of hanging the loader.
  double timeoutSeconds = 60.0;
};

/// Which frames to decode and how to shape them.
/// Frames start, start + stride, ..., start + (count - 1) * stride (indices in presentation
/// order, 0-based), each optionally resized so that its short side is resizeShortSide
/// (aspect kept, bicubic) and then cropped to a cropSize x cropSize square whose top-left
/// corner is (cropX, cropY) in the resized frame, or centred when those are -1.
struct ClipRequest {
  int start = 0;
  int count = 1;
  int stride = 1;
  int resizeShortSide = 0;  ///< 0: keep the decoded size
  int cropSize = 0;         ///< 0: no crop
  int cropX = -1;           ///< -1: centre
  int cropY = -1;           ///< -1: centre
};

/// Result of decodeAvailable(): every frame that could be decoded, and why it stopped early.
struct PartialDecode {
  VideoFrames frames;
  std::string problem;  ///< empty when all info().frameCount frames decoded; else the reason
};

/// One open file. Not thread-safe: use one decoder per thread (they are independent).
/// Every failure throws MediaError naming the file: "cannot open: ...", "no video stream",
/// "zero frames", "too short for the requested clip: ...", "truncated: got 7 of 16 frames",
/// "corrupt packet at frame N: ...", "timed out". Corrupt or truncated input never crashes.
class VideoDecoder {
 public:
  /// Opens and probes `path` (counting frames if the container does not store the count).
  explicit VideoDecoder(std::string path, VideoDecoderOptions options = {});
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  const std::string& path() const;
  const VideoInfo& info() const;

  /// Decodes the requested frames; seeks to the nearest keyframe before `start` when the
  /// format allows it, then decodes forward. Throws unless all request.count frames decode.
  VideoFrames decode(const ClipRequest& request);

  /// Decodes every frame from the first, full size, stopping at the first error instead of
  /// throwing (open errors still throw). For partially readable files.
  PartialDecode decodeAvailable();

 private:
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

/// FFmpeg logs decoder complaints about damaged input to stderr; quiet keeps only fatal ones.
/// Process-wide (av_log_set_level).
void setFfmpegLogQuiet(bool quiet);

/// Convenience: VideoDecoder(path).info().
VideoInfo probeVideo(const std::string& path, VideoDecoderOptions options = {});

}  // namespace tb::trainer::media
