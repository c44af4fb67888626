// `metrics A B` with two folders: the paired scores over files of the same relative name, and
// rFID (image folders, --fid-weights) or rFVD (video folders, --fvd-weights) between the sets.
#include "trainer/cli/metrics_commands.h"

#include "trainer/evaluation/fid_inception.h"
#include "trainer/evaluation/frechet_distance.h"
#include "trainer/evaluation/fvd_i3d.h"
#include "trainer/evaluation/image_metrics.h"
#include "trainer/evaluation/lpips.h"
#include "trainer/media/frame_tensors.h"
#include "trainer/media/media_folder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tb::trainer::cli {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPrefix = "tokenbench-trainer metrics: ";

// The files of `root` of `kind`, relative to it, in scanMediaFolder's order.
std::vector<std::string> relativeFiles(const std::string& root, media::MediaKind kind) {
  std::vector<std::string> out;
  for (const std::string& path : media::scanMediaFolder(root, kind))
    out.push_back(fs::path(path).lexically_relative(root).generic_string());
  return out;
}

}  // namespace

int computeFolderMetrics(const MetricsArgs& args) {
  if (!args.fid_weights.empty() && !args.fvd_weights.empty()) {
    std::cerr << kPrefix
              << "--fid-weights is for folders of images, --fvd-weights for folders of "
                 "videos: give one\n";
    return 2;
  }
  std::vector<std::string> files;
  media::MediaKind kind = media::MediaKind::Image;
  // Empty holders until their weight files are given.
  metrics::Lpips lpips{nullptr};
  metrics::FidInception inception{nullptr};
  metrics::FvdI3d i3d{nullptr};
  try {
    const bool videos = relativeFiles(args.a, media::MediaKind::Image).empty();
    kind = videos ? media::MediaKind::Video : media::MediaKind::Image;
    files = relativeFiles(args.a, kind);
    const std::vector<std::string> others = relativeFiles(args.b, kind);
    if (files.empty()) throw std::runtime_error(args.a + ": no image or video files");
    // Pairs by relative name: a file on one side only is named.
    const auto expectPairs = [](const std::vector<std::string>& mine,
                                const std::vector<std::string>& theirs, const std::string& folder) {
      for (const std::string& name : mine) {
        if (!std::binary_search(theirs.begin(), theirs.end(), name))
          throw std::runtime_error(folder + ": no " + name + " to pair with the other folder's");
      }
    };
    expectPairs(files, others, args.b);
    expectPairs(others, files, args.a);
    if (!args.fid_weights.empty() && videos)
      throw std::runtime_error("--fid-weights: " + args.a +
                               " holds videos; rFVD takes --fvd-weights");
    if (!args.fvd_weights.empty() && !videos)
      throw std::runtime_error("--fvd-weights: " + args.a +
                               " holds images; rFID takes --fid-weights");
    if (!args.lpips_backbone.empty()) {
      lpips = metrics::loadLpips(metrics::parseLpipsNet(args.lpips_net), args.lpips_backbone,
                                 args.lpips_lin);
    }
    if (!args.fid_weights.empty()) {
      inception = metrics::FidInception();
      inception->loadWeights(args.fid_weights);
    }
    if (!args.fvd_weights.empty()) {
      i3d = metrics::FvdI3d();
      i3d->loadWeights(args.fvd_weights);
    }
  } catch (const std::exception& e) {
    std::cerr << kPrefix << e.what() << "\n";
    return 2;
  }

  const bool fid = !inception.is_empty(), fvd = !i3d.is_empty();
  metrics::FeatureStatistics reals(fid ? 2048 : 400), fakes(fid ? 2048 : 400);
  double psnr = 0, ssim = 0, lpips_sum = 0;
  std::int64_t short_clips = 0;
  torch::NoGradGuard no_grad;
  for (std::size_t k = 0; k < files.size(); ++k) {
    const std::string a_path = (fs::path(args.a) / files[k]).string();
    const std::string b_path = (fs::path(args.b) / files[k]).string();
    try {
      const media::VideoFrames a = readMediaFrames(a_path);
      const media::VideoFrames b = readMediaFrames(b_path);
      if (a.width != b.width || a.height != b.height || a.count != b.count) {
        throw std::runtime_error(b_path + ": " + describeFrames(b) + ", but " + a_path + " is " +
                                 describeFrames(a));
      }
      psnr += metrics::psnr(a, b);
      ssim += metrics::ssim(a, b);
      if (!lpips.is_empty()) lpips_sum += metrics::lpips(lpips, a, b);
      if (fid) {
        const auto image = [](const media::VideoFrames& f) {
          return media::framesToBytes(f).permute({0, 3, 1, 2}).to(torch::kFloat32) / 255.0;
        };
        reals.add(inception->forward(image(a)));
        fakes.add(inception->forward(image(b)));
      }
      if (fvd) {
        if (a.count < metrics::kFvdMinFrames) {
          std::cerr << kPrefix << files[k] << ": " << a.count << " frames, the I3D needs "
                    << metrics::kFvdMinFrames << ": not in rFVD\n";
          ++short_clips;
        } else {
          reals.add(i3d->forward(media::framesToBytes(a).unsqueeze(0)));
          fakes.add(i3d->forward(media::framesToBytes(b).unsqueeze(0)));
        }
      }
    } catch (const std::exception& e) {
      std::cerr << kPrefix << e.what() << "\n";
      return 2;
    }
    std::cerr << "\rmetrics: " << k + 1 << "/" << files.size() << std::flush;
  }
  std::cerr << "\n";

  const double n = static_cast<double>(files.size());
  nlohmann::ordered_json out;
  out["pairs"] = files.size();
  out["psnr"] = psnr / n;
  out["ssim"] = ssim / n;
  if (!lpips.is_empty()) out["lpips"] = lpips_sum / n;
  if (fid || fvd) {
    const char* name = fid ? "rfid" : "rfvd";
    const std::int64_t dim = fid ? 2048 : 400;
    if (reals.count() < 2) {
      std::cerr << kPrefix << name << " needs at least 2 " << (fid ? "images" : "clips")
                << ", there are " << reals.count() << "\n";
      return 2;
    }
    out[name] = metrics::frechetDistance(reals, fakes);
    out[std::string(name) + "_samples"] = reals.count();
    if (fvd) out["rfvd_short_clips"] = short_clips;
    if (reals.count() <= dim) {
      std::cerr << kPrefix << name << " from " << reals.count() << " samples, not more than the "
                << dim << " feature dimensions: the covariances are singular and the value is "
                << "biased upward; papers use " << (fid ? "50,000 images" : "whole test splits")
                << "\n";
    }
  }
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace tb::trainer::cli
