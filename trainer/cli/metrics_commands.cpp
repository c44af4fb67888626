#include "trainer/cli/metrics_commands.h"

#include "trainer/evaluation/image_metrics.h"
#include "trainer/evaluation/lpips.h"
#include "trainer/media/media_error.h"
#include "trainer/media/media_folder.h"
#include "trainer/media/video_frames.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_decoder.h"
#endif
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>

namespace tb::trainer::cli {

media::VideoFrames readMediaFrames(const std::string& path) {
  if (media::hasMediaExtension(path, media::MediaKind::Image)) {
#if TB_WITH_OPENCV
    return media::ImageReader::read(path);
#else
    throw media::MediaError(path, "images need a build with OpenCV (TB_WITH_OPENCV)");
#endif
  }
  if (media::hasMediaExtension(path, media::MediaKind::Video)) {
#if TB_WITH_FFMPEG
    media::VideoDecoder decoder(path);
    media::ClipRequest all;
    all.count = decoder.info().frameCount;
    return decoder.decode(all);
#else
    throw media::MediaError(path, "videos need a build with FFmpeg (TB_WITH_FFMPEG)");
#endif
  }
  throw media::MediaError(path, "not an image or video file extension");
}

std::string describeFrames(const media::VideoFrames& f) {
  return std::to_string(f.width) + "x" + std::to_string(f.height) + ", " + std::to_string(f.count) +
         (f.count == 1 ? " frame" : " frames");
}

int computeMetrics(const MetricsArgs& args) {
  constexpr const char* kPrefix = "tokenbench-trainer metrics: ";
  if (args.lpips_backbone.empty() != args.lpips_lin.empty()) {
    std::cerr << kPrefix << "--lpips-backbone and --lpips-lin go together (got only "
              << (args.lpips_lin.empty() ? "--lpips-backbone" : "--lpips-lin") << ")\n";
    return 2;
  }
  std::error_code ec;
  const bool folder_a = std::filesystem::is_directory(args.a, ec);
  const bool folder_b = std::filesystem::is_directory(args.b, ec);
  if (folder_a && folder_b) return computeFolderMetrics(args);
  if (folder_a != folder_b) {
    std::cerr << kPrefix << (folder_a ? args.a : args.b)
              << " is a folder: give two folders (paired by file name) or two files\n";
    return 2;
  }
  if (!args.fid_weights.empty() || !args.fvd_weights.empty()) {
    std::cerr << kPrefix << (args.fid_weights.empty() ? "--fvd-weights" : "--fid-weights")
              << ": rFID and rFVD compare sets: give two folders\n";
    return 2;
  }
  media::VideoFrames a, b;
  std::optional<metrics::Lpips> model;
  try {
    a = readMediaFrames(args.a);
    b = readMediaFrames(args.b);
    if (a.width != b.width || a.height != b.height || a.count != b.count) {
      std::cerr << kPrefix << args.b << ": " << describeFrames(b) << ", but " << args.a << " is "
                << describeFrames(a) << "\n";
      return 2;
    }
    if (!args.lpips_backbone.empty()) {
      model = metrics::loadLpips(metrics::parseLpipsNet(args.lpips_net), args.lpips_backbone,
                                 args.lpips_lin);
    }
  } catch (const std::exception& e) {
    std::cerr << kPrefix << e.what() << "\n";
    return 2;
  }
  nlohmann::ordered_json out;
  try {
    out["psnr"] = metrics::psnr(a, b);
    out["ssim"] = metrics::ssim(a, b);
    if (model) out["lpips"] = metrics::lpips(*model, a, b);
  } catch (const std::exception& e) {  // frames too small for SSIM or for the LPIPS backbone
    std::cerr << kPrefix << args.a << " vs " << args.b << ": " << e.what() << "\n";
    return 2;
  }
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace tb::trainer::cli
