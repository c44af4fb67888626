#include "trainer/media/video_encoder.h"

#include "core/atomic_file.h"
#include "trainer/media/av_handles.h"
#include "trainer/media/media_error.h"
#include "trainer/media/palette_quantizer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

namespace tb::trainer::media {

using namespace detail;

namespace {

std::string lowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

VideoCodec codecForExtension(const std::string& ext) {
  if (ext == ".mp4" || ext == ".mov" || ext == ".m4v") return VideoCodec::H264;
  if (ext == ".mkv") return VideoCodec::Ffv1;
  if (ext == ".avi") return VideoCodec::Mpeg4;
  if (ext == ".webm") return VideoCodec::Vp9;
  if (ext == ".ogv") return VideoCodec::Theora;
  if (ext == ".mpg" || ext == ".mpeg") return VideoCodec::Mpeg2;
  if (ext == ".gif") return VideoCodec::Gif;
  return VideoCodec::Auto;
}

}  // namespace

class VideoEncoder::Impl {
 public:
  Impl(std::string path, int width, int height, double fps, VideoEncoderOptions options)
      : m_file(path),
        m_path(std::move(path)),
        m_width(width),
        m_height(height),
        m_fps(fps),
        m_options(options) {
    try {
      open();
    } catch (...) {
      release();
      throw;
    }
  }
  ~Impl() { release(); }

  void addFrame(const uint8_t* rgb) {
    if (m_finished) fail("frame added after finish()");
    const std::size_t bytes = static_cast<std::size_t>(m_width) * m_height * 3;
    if (m_codec == VideoCodec::Gif) {
      m_gifFrames.insert(m_gifFrames.end(), rgb, rgb + bytes);
      ++m_count;
      return;
    }
    check(av_frame_make_writable(m_frame.get()), "cannot prepare frame");
    // swscale's SIMD paths read up to 16 bytes past the end of the source picture (valgrind:
    // "invalid read of size 16" at the last row), so the caller's exact-size buffer is copied
    // into a padded one first.
    m_staging.resize(bytes + kSourcePadding);
    std::memcpy(m_staging.data(), rgb, bytes);
    const uint8_t* src[4] = {m_staging.data(), nullptr, nullptr, nullptr};
    const int srcStride[4] = {m_width * 3, 0, 0, 0};
    sws_scale(m_sws.get(), src, srcStride, 0, m_height, m_frame->data, m_frame->linesize);
    m_frame->pts = m_count++;
    send(m_frame.get());
  }

  void finish() {
    if (m_finished) return;
    if (m_count == 0) fail("no frames to write");
    if (m_codec == VideoCodec::Gif) writeGifFrames();
    send(nullptr);
    check(av_write_trailer(m_format), "cannot write trailer");
    if (!(m_format->oformat->flags & AVFMT_NOFILE))
      check(avio_closep(&m_format->pb), "cannot close file");
    release();
    m_file.commit(core::Durability::Visible);  // samples and comparisons: made again at will
    m_finished = true;
  }

  std::string encoderName() const { return m_encoderName; }

 private:
  [[noreturn]] void fail(const std::string& reason) const { throw MediaError(m_path, reason); }
  void check(int ret, const char* what) const {
    if (ret < 0) fail(std::string(what) + ": " + avErrorText(ret));
  }

  void open() {
    if (m_width <= 0 || m_height <= 0)
      fail("invalid frame size " + std::to_string(m_width) + "x" + std::to_string(m_height));
    if (!(m_fps > 0) || !std::isfinite(m_fps)) fail("invalid frame rate " + std::to_string(m_fps));
    const std::string ext = lowerExtension(m_path);
    m_codec = m_options.codec == VideoCodec::Auto ? codecForExtension(ext) : m_options.codec;
    if (m_codec == VideoCodec::Auto) fail("unsupported output extension '" + ext + "'");
    const AVOutputFormat* container = av_guess_format(nullptr, m_path.c_str(), nullptr);
    if (!container) fail("unsupported output extension '" + ext + "'");

    const AVCodec* encoder = nullptr;
    AVPixelFormat pixelFormat = AV_PIX_FMT_YUV420P;
    switch (m_codec) {
      case VideoCodec::H264:
        encoder = avcodec_find_encoder_by_name("libx264");
        if (!encoder)
          m_codec = VideoCodec::Mpeg4, encoder = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
        break;
      case VideoCodec::Mpeg4:
        encoder = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
        break;
      case VideoCodec::Mpeg2:
        encoder = avcodec_find_encoder(AV_CODEC_ID_MPEG2VIDEO);
        break;
      case VideoCodec::Vp9:
        encoder = avcodec_find_encoder_by_name("libvpx-vp9");
        if (!encoder) encoder = avcodec_find_encoder_by_name("libvpx");
        break;
      case VideoCodec::Theora:
        encoder = avcodec_find_encoder_by_name("libtheora");
        break;
      case VideoCodec::Ffv1:
        encoder = avcodec_find_encoder(AV_CODEC_ID_FFV1);
        pixelFormat = AV_PIX_FMT_0RGB32;  // FFV1's 8-bit RGB input (planar GBR needs >= 9 bits)
        break;
      case VideoCodec::Gif:
        encoder = avcodec_find_encoder(AV_CODEC_ID_GIF);
        pixelFormat = AV_PIX_FMT_PAL8;
        break;
      case VideoCodec::Auto:
        break;
    }
    if (!encoder) fail("no encoder available for the requested codec in this FFmpeg build");
    m_encoderName = encoder->name;
    if (pixelFormat == AV_PIX_FMT_YUV420P && (m_width % 2 || m_height % 2))
      fail(m_encoderName + " on yuv420p needs even width and height, got " +
           std::to_string(m_width) + "x" + std::to_string(m_height));

    int ret =
        avformat_alloc_output_context2(&m_format, container, nullptr, m_file.tempPath().c_str());
    if (ret < 0 || !m_format) fail("cannot create output: " + avErrorText(ret));
    m_context.reset(avcodec_alloc_context3(encoder));
    if (!m_context) fail("out of memory");
    const AVRational rate = av_d2q(m_fps, 100000);
    m_context->width = m_width;
    m_context->height = m_height;
    m_context->pix_fmt = pixelFormat;
    m_context->time_base = m_codec == VideoCodec::Gif ? AVRational{1, 100} : av_inv_q(rate);
    m_context->framerate = rate;
    m_context->thread_count = std::max(1, m_options.threads);
    if (m_options.gopSize > 0) m_context->gop_size = m_options.gopSize;
    if (pixelFormat == AV_PIX_FMT_YUV420P) {
      // What swscale's default RGB -> YUV conversion produces; stated so decoders agree.
      m_context->colorspace = AVCOL_SPC_SMPTE170M;
      m_context->color_range = AVCOL_RANGE_MPEG;
    }
    if (container->flags & AVFMT_GLOBALHEADER) m_context->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    const int q = m_options.quality;
    switch (m_codec) {
      case VideoCodec::H264:
        av_opt_set(m_context->priv_data, "preset", "veryfast", 0);
        av_opt_set(m_context->priv_data, "crf", std::to_string(q >= 0 ? q : 18).c_str(), 0);
        break;
      case VideoCodec::Vp9:
        m_context->bit_rate = 0;
        av_opt_set(m_context->priv_data, "crf", std::to_string(q >= 0 ? q : 30).c_str(), 0);
        av_opt_set(m_context->priv_data, "deadline", "realtime", 0);
        av_opt_set(m_context->priv_data, "cpu-used", "8", 0);
        break;
      case VideoCodec::Mpeg4:
      case VideoCodec::Mpeg2:
        m_context->flags |= AV_CODEC_FLAG_QSCALE;
        m_context->global_quality = FF_QP2LAMBDA * std::clamp(q >= 0 ? q : 3, 1, 31);
        break;
      case VideoCodec::Theora:
        m_context->flags |= AV_CODEC_FLAG_QSCALE;
        m_context->global_quality = FF_QP2LAMBDA * std::clamp(q >= 0 ? q : 8, 0, 10);
        break;
      default:
        break;
    }
    ret = avcodec_open2(m_context.get(), encoder, nullptr);
    if (ret < 0) fail("cannot open encoder " + m_encoderName + ": " + avErrorText(ret));
    m_stream = avformat_new_stream(m_format, nullptr);
    if (!m_stream) fail("out of memory");
    check(avcodec_parameters_from_context(m_stream->codecpar, m_context.get()),
          "cannot set stream parameters");
    m_stream->time_base = m_context->time_base;
    m_stream->avg_frame_rate = rate;
    if (!(container->flags & AVFMT_NOFILE))
      check(avio_open(&m_format->pb, m_file.tempPath().c_str(), AVIO_FLAG_WRITE),
            "cannot create file");
    check(avformat_write_header(m_format, nullptr), "cannot write header");

    m_frame.reset(av_frame_alloc());
    m_packet.reset(av_packet_alloc());
    if (!m_frame || !m_packet) fail("out of memory");
    m_frame->format = pixelFormat;
    m_frame->width = m_width;
    m_frame->height = m_height;
    check(av_frame_get_buffer(m_frame.get(), 0), "cannot allocate frame");
    if (m_codec != VideoCodec::Gif) {
      m_sws.reset(sws_getContext(m_width, m_height, AV_PIX_FMT_RGB24, m_width, m_height,
                                 pixelFormat, SWS_BICUBIC | SWS_ACCURATE_RND, nullptr, nullptr,
                                 nullptr));
      if (!m_sws) fail("cannot create colour converter");
    }
  }

  void writeGifFrames() {
    const std::size_t pixels = static_cast<std::size_t>(m_width) * m_height;
    PaletteQuantizer palette(m_gifFrames.data(), pixels * m_count);
    std::vector<uint8_t> indices(pixels);
    int64_t previousPts = -1;
    for (int t = 0; t < m_count; ++t) {
      check(av_frame_make_writable(m_frame.get()), "cannot prepare frame");
      palette.map(m_gifFrames.data() + pixels * 3 * t, m_width, m_height, m_options.gifDither,
                  indices.data());
      for (int y = 0; y < m_height; ++y)
        std::memcpy(m_frame->data[0] + static_cast<std::ptrdiff_t>(m_frame->linesize[0]) * y,
                    indices.data() + static_cast<std::size_t>(y) * m_width,
                    static_cast<std::size_t>(m_width));
      auto* argb = reinterpret_cast<uint32_t*>(m_frame->data[1]);
      const std::vector<uint8_t>& colours = palette.colours();
      for (int i = 0; i < 256; ++i) {
        const int k = std::min(i, palette.size() - 1);
        argb[i] = 0xFF000000u | (uint32_t(colours[3 * k]) << 16) |
                  (uint32_t(colours[3 * k + 1]) << 8) | colours[3 * k + 2];
      }
      // GIF delays are whole centiseconds: round each frame's start time, keep them increasing.
      m_frame->pts = std::max<int64_t>(previousPts + 1, std::llround(t * 100.0 / m_fps));
      previousPts = m_frame->pts;
      send(m_frame.get());
    }
    m_gifFrames.clear();
  }

  /// Sends a frame (nullptr: flush) and writes every packet the encoder returns.
  void send(const AVFrame* frame) {
    int ret = avcodec_send_frame(m_context.get(), frame);
    if (ret < 0 && !(frame == nullptr && ret == AVERROR_EOF))
      fail("cannot encode frame: " + avErrorText(ret));
    for (;;) {
      ret = avcodec_receive_packet(m_context.get(), m_packet.get());
      if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return;
      check(ret, "cannot encode frame");
      m_packet->stream_index = m_stream->index;
      if (m_packet->duration <= 0)
        m_packet->duration =
            m_codec == VideoCodec::Gif ? std::max<int64_t>(1, std::llround(100.0 / m_fps)) : 1;
      av_packet_rescale_ts(m_packet.get(), m_context->time_base, m_stream->time_base);
      ret = av_interleaved_write_frame(m_format, m_packet.get());
      av_packet_unref(m_packet.get());
      check(ret, "cannot write packet");
    }
  }

  void release() {
    m_sws.reset();
    m_frame.reset();
    m_packet.reset();
    m_context.reset();
    if (m_format) {
      if (m_format->pb && !(m_format->oformat->flags & AVFMT_NOFILE)) avio_closep(&m_format->pb);
      avformat_free_context(m_format);
      m_format = nullptr;
    }
  }

  core::AtomicFile m_file;  // first member: destroyed last, after the file handle is closed
  std::string m_path;
  int m_width;
  int m_height;
  double m_fps;
  VideoEncoderOptions m_options;
  VideoCodec m_codec = VideoCodec::Auto;
  std::string m_encoderName;
  AVFormatContext* m_format = nullptr;
  AVStream* m_stream = nullptr;
  CodecContextPtr m_context;
  FramePtr m_frame;
  PacketPtr m_packet;
  SwsPtr m_sws;
  int m_count = 0;
  bool m_finished = false;
  std::vector<uint8_t> m_gifFrames;
  std::vector<uint8_t> m_staging;  // padded copy of the frame being converted
  static constexpr std::size_t kSourcePadding = 64;
};

VideoEncoder::VideoEncoder(std::string path, int width, int height, double fps,
                           VideoEncoderOptions options)
    : m_impl(std::make_unique<Impl>(std::move(path), width, height, fps, options)) {}
VideoEncoder::~VideoEncoder() = default;
void VideoEncoder::addFrame(const uint8_t* rgb) { m_impl->addFrame(rgb); }
void VideoEncoder::finish() { m_impl->finish(); }
std::string VideoEncoder::encoderName() const { return m_impl->encoderName(); }

void writeVideo(const std::string& path, const VideoFrames& frames, VideoEncoderOptions options) {
  if (!frames.consistent())
    throw MediaError(
        path, "inconsistent VideoFrames (rgb size does not match count x height x width x 3)");
  VideoEncoder encoder(path, frames.width, frames.height, frames.fps, options);
  for (int t = 0; t < frames.count; ++t) encoder.addFrame(frames.frame(t));
  encoder.finish();
}

}  // namespace tb::trainer::media
