#include "trainer/media/video_decoder.h"

#include "core/config_io.h"

#include "trainer/media/av_handles.h"
#include "trainer/media/media_error.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <unordered_set>
#include <vector>

namespace tb::trainer::media {

using namespace detail;

namespace {

using Clock = std::chrono::steady_clock;

/// Where each decoded frame goes: scaled to scaledW x scaledH, then the window
/// [cropX, cropX + outW) x [cropY, cropY + outH) is kept.
struct Geometry {
  int scaledW = 0, scaledH = 0;
  int cropX = 0, cropY = 0;
  int outW = 0, outH = 0;
};

/// How a decode pass ended.
struct PassResult {
  bool restartSequential = false;  ///< a seek landed after the start, or timestamps are missing
  std::string problem;             ///< why the pass stopped before `last` (empty: reached it / EOF)
  bool corrupt = false;            ///< problem is a decoder error (not a read error or EOF)
};

}  // namespace

class VideoDecoder::Impl {
 public:
  Impl(std::string path, VideoDecoderOptions options)
      : m_path(std::move(path)), m_options(options) {
    if (m_options.threads < 1) m_options.threads = 1;
    // Opening a named pipe blocks until a writer comes, where no deadline reaches: only regular
    // files are media inputs (as for weight files and data folders).
    if (const std::string kind = core::irregularFileKind(m_path); !kind.empty())
      fail("is " + kind + ", not a video file");
    armDeadline();
    try {
      open();
      probe();
    } catch (...) {
      close();  // the destructor does not run for a constructor that throws
      throw;
    }
  }
  ~Impl() {
    close();
    sws_freeContext(m_sws);
    av_freep(&m_scratch[0]);
  }

  const std::string& path() const { return m_path; }
  const VideoInfo& info() const { return m_info; }

  VideoFrames decode(const ClipRequest& request) {
    armDeadline();
    if (request.start < 0 || request.count < 1 || request.stride < 1)
      fail("invalid clip request: start " + std::to_string(request.start) + ", count " +
           std::to_string(request.count) + ", stride " + std::to_string(request.stride));
    const long long last =
        request.start + static_cast<long long>(request.count - 1) * request.stride;
    if (last >= m_info.frameCount)
      fail("too short for the requested clip: needs frames " + std::to_string(request.start) +
           ".." + std::to_string(last) + " but has " + std::to_string(m_info.frameCount) +
           (m_info.warning.empty() ? std::string() : " (" + m_info.warning + ")"));
    const Geometry g = geometryFor(request);

    VideoFrames out;
    out.width = g.outW;
    out.height = g.outH;
    out.count = request.count;
    out.fps = m_info.fps;
    out.rgb.assign(out.frameBytes() * request.count, 0);
    std::vector<char> got(request.count, 0);
    int gotCount = 0;
    auto onFrame = [&](int index, const AVFrame* frame) {
      if ((index - request.start) % request.stride != 0) return;
      const int k = (index - request.start) / request.stride;
      if (k < 0 || k >= request.count || got[k]) return;
      convert(frame, g, out.frame(k));
      got[k] = 1;
      ++gotCount;
    };
    PassResult pass = runPass(request.start, static_cast<int>(last), true, onFrame);
    if (pass.restartSequential)
      pass = runPass(request.start, static_cast<int>(last), false, onFrame);
    if (gotCount < request.count) {
      if (pass.corrupt) fail(pass.problem);
      std::string reason = "truncated: got " + std::to_string(gotCount) + " of " +
                           std::to_string(request.count) + " frames";
      if (!pass.problem.empty()) reason += " (" + pass.problem + ")";
      fail(reason);
    }
    return out;
  }

  PartialDecode decodeAvailable() {
    armDeadline();
    Geometry g;
    g.scaledW = g.outW = m_info.width;
    g.scaledH = g.outH = m_info.height;
    PartialDecode result;
    VideoFrames& out = result.frames;
    out.width = g.outW;
    out.height = g.outH;
    out.fps = m_info.fps;
    const PassResult pass = runPass(0, INT_MAX, false, [&](int, const AVFrame* frame) {
      out.rgb.resize(out.frameBytes() * (out.count + 1));
      convert(frame, g, out.frame(out.count));
      ++out.count;
    });
    if (out.count == 0)
      fail("zero frames decoded" +
           (pass.problem.empty() ? std::string() : " (" + pass.problem + ")"));
    const int expected = std::max(m_info.frameCount, m_expectedFrames);
    if (out.count < expected || !pass.problem.empty()) {
      result.problem = "truncated: got " + std::to_string(out.count) + " of " +
                       std::to_string(expected) + " frames";
      if (!pass.problem.empty()) result.problem += " (" + pass.problem + ")";
    }
    return result;
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const { throw MediaError(m_path, reason); }

  void armDeadline() {
    const double seconds = m_options.timeoutSeconds > 0 ? m_options.timeoutSeconds : 1e9;
    m_deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(seconds));
  }
  bool pastDeadline() const { return Clock::now() > m_deadline; }
  static int interruptCallback(void* opaque) {
    return static_cast<const Impl*>(opaque)->pastDeadline() ? 1 : 0;
  }

  /// `what` failed with FFmpeg error `code`: the reason text, "timed out" when we interrupted it.
  std::string errorReason(const std::string& what, int code) const {
    if (code == AVERROR_EXIT || pastDeadline())
      return "timed out after " + std::to_string(m_options.timeoutSeconds) + " s";
    return what + ": " + avErrorText(code);
  }

  void open() {
    m_format = avformat_alloc_context();
    if (!m_format) fail("cannot open: out of memory");
    m_format->interrupt_callback.callback = &Impl::interruptCallback;
    m_format->interrupt_callback.opaque = this;
    int ret = avformat_open_input(&m_format, m_path.c_str(), nullptr, nullptr);
    if (ret < 0) {  // avformat_open_input frees the context on failure
      m_format = nullptr;
      fail(errorReason("cannot open", ret));
    }
    ret = avformat_find_stream_info(m_format, nullptr);
    if (ret < 0) fail(errorReason("cannot open: cannot read stream info", ret));
    const AVCodec* decoder = nullptr;
    ret = av_find_best_stream(m_format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (ret == AVERROR_STREAM_NOT_FOUND) fail("no video stream");
    if (ret == AVERROR_DECODER_NOT_FOUND || !decoder) {
      const AVStream* any = nullptr;
      for (unsigned i = 0; i < m_format->nb_streams; ++i)
        if (m_format->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO)
          any = m_format->streams[i];
      fail(std::string("no decoder for codec ") +
           (any ? avcodec_get_name(any->codecpar->codec_id) : "?"));
    }
    if (ret < 0) fail(errorReason("no video stream", ret));
    m_streamIndex = ret;
    AVStream* stream = m_format->streams[m_streamIndex];
    if (stream->codecpar->width <= 0 || stream->codecpar->height <= 0)
      fail("no video stream (frame size " + std::to_string(stream->codecpar->width) + "x" +
           std::to_string(stream->codecpar->height) + ")");
    m_codec.reset(avcodec_alloc_context3(decoder));
    if (!m_codec) fail("cannot open decoder: out of memory");
    ret = avcodec_parameters_to_context(m_codec.get(), stream->codecpar);
    if (ret < 0) fail(errorReason("cannot open decoder", ret));
    m_codec->thread_count = m_options.threads;
    m_codec->pkt_timebase = stream->time_base;
    ret = avcodec_open2(m_codec.get(), decoder, nullptr);
    if (ret < 0) fail(errorReason("cannot open decoder", ret));
    m_fresh = true;
  }

  void close() {
    m_codec.reset();
    if (m_format) avformat_close_input(&m_format);
    m_format = nullptr;
  }

  /// Back to the first packet: reopening is the one rewind that works for every demuxer.
  void rewind() {
    if (m_fresh) return;
    close();
    open();
  }

  void probe() {
    const AVStream* stream = m_format->streams[m_streamIndex];
    m_info.width = stream->codecpar->width;
    m_info.height = stream->codecpar->height;
    m_info.codecName = avcodec_get_name(stream->codecpar->codec_id);
    m_info.formatName = m_format->iformat->name;
    m_rate = av_guess_frame_rate(m_format, const_cast<AVStream*>(stream), nullptr);
    m_info.fps = (m_rate.num > 0 && m_rate.den > 0) ? av_q2d(m_rate) : 0.0;
    m_timeBase = stream->time_base;
    m_startPts = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    // Frames are counted by demuxing every packet, even where the container stores a count: a
    // cut mp4 or avi still promises every frame, and an avi with dropped frames stores its
    // length in frame periods (tree.avi: 68 frames, timestamps up to frame 444).
    const bool stored = stream->nb_frames > 0 && stream->nb_frames <= INT_MAX;
    m_info.frameCountCounted = !stored;
    PacketScan scan;
    if (m_options.known) {
      m_info.frameCount = m_options.known->frameCount;
      m_info.sparseTimestamps = m_options.known->sparseTimestamps;
    } else {
      scan = scanPackets();
      m_info.frameCount =
          stored ? std::min(scan.count, static_cast<int>(stream->nb_frames)) : scan.count;
      // Two frames whose timestamps round to one frame period (a muxer that truncated
      // N / rate in floating point: 0.3 s stored as 0.299): found by timestamp, one of them
      // would be lost and clips across it cut short; counting numbers them right.
      m_info.sparseTimestamps = scan.sharedPeriods;
    }
    const bool headerDuration = m_format->duration != AV_NOPTS_VALUE && m_format->duration > 0;
    if (headerDuration)
      m_info.durationSeconds = static_cast<double>(m_format->duration) / AV_TIME_BASE;
    else if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0)
      m_info.durationSeconds = static_cast<double>(stream->duration) * av_q2d(m_timeBase);
    else if (m_info.fps > 0)
      m_info.durationSeconds = m_info.frameCount / m_info.fps;
    // How many frames the header promises: its count, else (a single stream whose duration is
    // not a bitrate estimate) its duration in frames.
    long long promised = stored ? stream->nb_frames : 0;
    if (!stored && headerDuration && m_format->nb_streams == 1 && m_info.fps > 0 &&
        m_format->duration_estimation_method != AVFMT_DURATION_FROM_BITRATE)
      promised = std::llround(m_info.durationSeconds * m_info.fps);
    if (!m_options.known && promised > m_info.frameCount && promised <= INT_MAX) {
      // Fewer frames than promised: a cut file when its packets stop early, a file with gaps
      // in its timestamps (dropped frames, variable rate) when they reach the promised end.
      const long long reached = scan.lastPts == AV_NOPTS_VALUE || m_info.fps <= 0
                                    ? 0
                                    : std::llround(static_cast<double>(scan.lastPts - m_startPts) *
                                                   av_q2d(m_timeBase) * m_info.fps) +
                                          1;
      if (reached >= promised) {
        m_info.sparseTimestamps = true;
      } else {
        m_expectedFrames = static_cast<int>(promised);
        m_info.warning = "truncated: got " + std::to_string(m_info.frameCount) + " of " +
                         std::to_string(promised) + " frames";
        if (!stored)
          m_info.warning += " (the header says " + std::to_string(m_info.durationSeconds) + " s)";
      }
    }
    if (m_info.frameCount <= 0)
      fail("zero frames" + (m_info.warning.empty() ? std::string() : " (" + m_info.warning + ")"));
  }

  /// What demuxing every packet of the stream found.
  struct PacketScan {
    int count = 0;                     ///< packets not flagged corrupt
    int64_t lastPts = AV_NOPTS_VALUE;  ///< the latest timestamp among them, in stream time base
    bool sharedPeriods = false;        ///< two of them fall on the same frame period
  };

  PacketScan scanPackets() {
    PacketPtr packet(av_packet_alloc());
    if (!packet) fail("out of memory");
    m_fresh = false;
    PacketScan scan;
    std::unordered_set<int> periods;  // frame periods the timestamps fall on
    for (;;) {
      const int ret = av_read_frame(m_format, packet.get());
      if (ret < 0) {
        if (ret == AVERROR_EXIT || pastDeadline()) fail(errorReason("counting frames", ret));
        break;  // EOF, or a damaged tail: the frames before it are what the file has
      }
      if (packet->stream_index == m_streamIndex && !(packet->flags & AV_PKT_FLAG_CORRUPT)) {
        ++scan.count;
        if (packet->pts != AV_NOPTS_VALUE &&
            (scan.lastPts == AV_NOPTS_VALUE || packet->pts > scan.lastPts))
          scan.lastPts = packet->pts;
        if (packet->pts != AV_NOPTS_VALUE && m_info.fps > 0 &&
            !periods.insert(indexFromTimestamp(packet->pts)).second)
          scan.sharedPeriods = true;
      }
      av_packet_unref(packet.get());
    }
    return scan;
  }

  Geometry geometryFor(const ClipRequest& r) const {
    Geometry g;
    const int w = m_info.width, h = m_info.height;
    if (r.resizeShortSide < 0 || r.cropSize < 0)
      fail("invalid clip request: negative resize or crop size");
    if (r.resizeShortSide > 0) {
      if (w <= h) {
        g.scaledW = r.resizeShortSide;
        g.scaledH = std::max(
            1, static_cast<int>(std::lround(static_cast<double>(h) * r.resizeShortSide / w)));
      } else {
        g.scaledH = r.resizeShortSide;
        g.scaledW = std::max(
            1, static_cast<int>(std::lround(static_cast<double>(w) * r.resizeShortSide / h)));
      }
    } else {
      g.scaledW = w;
      g.scaledH = h;
    }
    if (r.cropSize > 0) {
      if (r.cropSize > g.scaledW || r.cropSize > g.scaledH)
        fail("crop " + std::to_string(r.cropSize) + " larger than the frame " +
             std::to_string(g.scaledW) + "x" + std::to_string(g.scaledH));
      g.outW = g.outH = r.cropSize;
      g.cropX = r.cropX < 0 ? (g.scaledW - r.cropSize) / 2 : r.cropX;
      g.cropY = r.cropY < 0 ? (g.scaledH - r.cropSize) / 2 : r.cropY;
      if (g.cropX + r.cropSize > g.scaledW || g.cropY + r.cropSize > g.scaledH)
        fail("crop offset (" + std::to_string(g.cropX) + ", " + std::to_string(g.cropY) +
             ") puts the " + std::to_string(r.cropSize) + " square outside the frame " +
             std::to_string(g.scaledW) + "x" + std::to_string(g.scaledH));
    } else {
      g.outW = g.scaledW;
      g.outH = g.scaledH;
    }
    return g;
  }

  /// Converts one decoded frame to RGB24 at g.scaledW x g.scaledH and copies the crop to dst.
  void convert(const AVFrame* frame, const Geometry& g, uint8_t* dst) {
    const auto format = static_cast<AVPixelFormat>(frame->format);
    // The file's YUV matrix and range, when it states them (sws assumes BT.601, limited range).
    const bool stated =
        frame->colorspace != AVCOL_SPC_UNSPECIFIED || frame->color_range == AVCOL_RANGE_JPEG;
    const std::array<int, 6> key = {
        frame->width, frame->height, frame->format,
        g.scaledW,    g.scaledH,     stated ? frame->colorspace * 4 + frame->color_range : -1};
    if (!m_sws || key != m_swsKey) {
      sws_freeContext(m_sws);
      m_sws = sws_getContext(frame->width, frame->height, format, g.scaledW, g.scaledH,
                             AV_PIX_FMT_RGB24, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT,
                             nullptr, nullptr, nullptr);
      if (!m_sws) {
        const char* name = av_get_pix_fmt_name(format);
        fail(std::string("cannot convert pixel format ") + (name ? name : "?") + " to RGB");
      }
      m_swsKey = key;
      int* inv = nullptr;
      int* table = nullptr;
      int srcRange = 0, dstRange = 0, brightness = 0, contrast = 0, saturation = 0;
      if (stated && sws_getColorspaceDetails(m_sws, &inv, &srcRange, &table, &dstRange, &brightness,
                                             &contrast, &saturation) >= 0) {
        const int space =
            frame->colorspace != AVCOL_SPC_UNSPECIFIED ? frame->colorspace : SWS_CS_DEFAULT;
        srcRange = frame->color_range == AVCOL_RANGE_JPEG ? 1 : srcRange;
        sws_setColorspaceDetails(m_sws, sws_getCoefficients(space), srcRange, table, dstRange,
                                 brightness, contrast, saturation);
      }
    }
    if (m_scratchW != g.scaledW || m_scratchH != g.scaledH) {
      av_freep(&m_scratch[0]);
      if (av_image_alloc(m_scratch, m_scratchLines, g.scaledW, g.scaledH, AV_PIX_FMT_RGB24, 32) <
          0) {
        m_scratchW = m_scratchH = 0;
        fail("out of memory converting a frame");
      }
      m_scratchW = g.scaledW;
      m_scratchH = g.scaledH;
    }
    sws_scale(m_sws, frame->data, frame->linesize, 0, frame->height, m_scratch, m_scratchLines);
    const std::size_t rowBytes = static_cast<std::size_t>(g.outW) * 3;
    for (int y = 0; y < g.outH; ++y)
      std::memcpy(dst + rowBytes * y,
                  m_scratch[0] + static_cast<std::ptrdiff_t>(m_scratchLines[0]) * (y + g.cropY) +
                      g.cropX * 3,
                  rowBytes);
  }

  bool canSeek() const {
    // Seeking numbers frames by timestamp; with gaps in them only counting numbers them right.
    return !m_info.sparseTimestamps && m_info.fps > 0 && m_format->pb &&
           (m_format->pb->seekable & AVIO_SEEKABLE_NORMAL) &&
           std::strcmp(m_format->iformat->name, "gif") != 0 &&
           !(m_format->iformat->flags & AVFMT_NOTIMESTAMPS);
  }

  int indexFromTimestamp(int64_t pts) const {
    const double seconds = static_cast<double>(pts - m_startPts) * av_q2d(m_timeBase);
    return static_cast<int>(std::llround(seconds * m_info.fps));
  }

  /// Decodes frames up to index `last` and hands every frame with index >= start to onFrame.
  /// With allowSeek, seeks to the keyframe before `start` and numbers frames by timestamp;
  /// otherwise decodes from the first packet and numbers frames by counting.
  PassResult runPass(int start, int last, bool allowSeek,
                     const std::function<void(int, const AVFrame*)>& onFrame) {
    PassResult result;
    bool seekMode = allowSeek && start > 0 && canSeek();
    if (seekMode) {
      const int64_t target = m_startPts + av_rescale_q(start, av_inv_q(m_rate), m_timeBase);
      if (av_seek_frame(m_format, m_streamIndex, target, AVSEEK_FLAG_BACKWARD) < 0) {
        seekMode = false;
      } else {
        avcodec_flush_buffers(m_codec.get());
        m_fresh = false;
      }
    }
    if (!seekMode) {
      rewind();
      avcodec_flush_buffers(m_codec.get());
    }
    m_fresh = false;

    PacketPtr packet(av_packet_alloc());
    FramePtr frame(av_frame_alloc());
    if (!packet || !frame) fail("out of memory");
    int counted = 0;        // frames decoded so far in this pass
    int nextIndex = start;  // the frame we are waiting for, for messages
    bool first = true;
    bool done = false;

    // Pulls every ready frame out of the decoder; false when the pass must stop.
    auto drain = [&]() -> bool {
      for (;;) {
        const int ret = avcodec_receive_frame(m_codec.get(), frame.get());
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return true;
        if (ret < 0) {
          result.problem =
              "corrupt packet at frame " + std::to_string(nextIndex) + ": " + avErrorText(ret);
          result.corrupt = true;
          return false;
        }
        int index = counted++;
        if (seekMode) {
          const int64_t ts = frame->best_effort_timestamp;
          if (ts == AV_NOPTS_VALUE || (first && indexFromTimestamp(ts) > start)) {
            av_frame_unref(frame.get());
            result.restartSequential = true;
            return false;
          }
          index = indexFromTimestamp(ts);
        }
        first = false;
        if (index > last) {
          av_frame_unref(frame.get());
          done = true;
          return false;
        }
        if (index >= start) {
          onFrame(index, frame.get());
          nextIndex = index + 1;
        }
        av_frame_unref(frame.get());
        if (index == last) {
          done = true;
          return false;
        }
        if (pastDeadline()) {
          result.problem = errorReason("decoding", AVERROR_EXIT);
          return false;
        }
      }
    };

    for (;;) {
      int ret = av_read_frame(m_format, packet.get());
      if (ret < 0) {
        if (ret != AVERROR_EOF) {
          if (ret == AVERROR_EXIT || pastDeadline()) {
            result.problem = errorReason("reading", ret);
            return result;
          }
          result.problem =
              "read error at frame " + std::to_string(nextIndex) + ": " + avErrorText(ret);
        }
        // End of input (or of its readable part): flush the frames the decoder still holds.
        ret = avcodec_send_packet(m_codec.get(), nullptr);
        if (ret >= 0 || ret == AVERROR_EOF) drain();
        if (done) result.problem.clear();
        return result;
      }
      if (packet->stream_index != m_streamIndex) {
        av_packet_unref(packet.get());
        continue;
      }
      ret = avcodec_send_packet(m_codec.get(), packet.get());
      av_packet_unref(packet.get());
      if (ret < 0 && ret != AVERROR(EAGAIN)) {
        result.problem =
            "corrupt packet at frame " + std::to_string(nextIndex) + ": " + avErrorText(ret);
        result.corrupt = true;
        return result;
      }
      if (!drain()) return result;
    }
  }

  std::string m_path;
  VideoDecoderOptions m_options;
  VideoInfo m_info;
  AVFormatContext* m_format = nullptr;
  CodecContextPtr m_codec;
  int m_streamIndex = -1;
  bool m_fresh = false;  // nothing read since open(): no rewind needed
  AVRational m_rate{0, 1};
  AVRational m_timeBase{1, 1};
  int64_t m_startPts = 0;
  int m_expectedFrames = 0;  // from the header, when a cut file holds fewer frames
  SwsContext* m_sws = nullptr;
  std::array<int, 6> m_swsKey{};  // source size, format, target size, colour key of m_sws
  uint8_t* m_scratch[4] = {nullptr, nullptr, nullptr, nullptr};
  int m_scratchLines[4] = {0, 0, 0, 0};
  int m_scratchW = 0, m_scratchH = 0;
  Clock::time_point m_deadline;
};

VideoDecoder::VideoDecoder(std::string path, VideoDecoderOptions options)
    : m_impl(std::make_unique<Impl>(std::move(path), options)) {}
VideoDecoder::~VideoDecoder() = default;
const std::string& VideoDecoder::path() const { return m_impl->path(); }
const VideoInfo& VideoDecoder::info() const { return m_impl->info(); }
VideoFrames VideoDecoder::decode(const ClipRequest& request) { return m_impl->decode(request); }
PartialDecode VideoDecoder::decodeAvailable() { return m_impl->decodeAvailable(); }

VideoInfo probeVideo(const std::string& path, VideoDecoderOptions options) {
  return VideoDecoder(path, options).info();
}

void setFfmpegLogQuiet(bool quiet) { av_log_set_level(quiet ? AV_LOG_FATAL : AV_LOG_INFO); }

}  // namespace tb::trainer::media
