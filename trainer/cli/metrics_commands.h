#pragma once
// The `metrics` subcommand: full-reference quality of one image or video against another.

#include <string>

namespace tb::trainer::cli {

struct MetricsArgs {
  std::string a;                   ///< reference image or video
  std::string b;                   ///< distorted image or video, same size and frame count as `a`
  std::string lpips_net = "alex";  ///< "alex" or "vgg"
  std::string lpips_backbone;      ///< torch.save dict of the backbone's features.* tensors
  std::string lpips_lin;           ///< torch.save dict of the lin<k>.model.1.weight tensors
};

/// `metrics A B`: prints one JSON object line {"psnr":..,"ssim":..,"lpips":..} on stdout
/// (means over frames for videos; see trainer/evaluation/image_metrics.h for PSNR's cap on
/// identical frames), "lpips" only when both weight files are given. Images and videos are told
/// apart by extension. Exit 0; 2 (message on stderr naming the file) for unreadable inputs, inputs
/// that differ in size or frame count, only one weight file, or weight files that do not fit.
int computeMetrics(const MetricsArgs& args);

}  // namespace tb::trainer::cli
