#pragma once
// The `metrics` subcommand: full-reference quality of one image or video against another.

#include "trainer/media/video_frames.h"

#include <string>

namespace tb::trainer::cli {

struct MetricsArgs {
  std::string a;                   ///< reference image or video
  std::string b;                   ///< distorted image or video, same size and frame count as `a`
  std::string lpips_net = "alex";  ///< "alex" or "vgg"
  std::string lpips_backbone;      ///< torch.save dict of the backbone's features.* tensors
  std::string lpips_lin;           ///< torch.save dict of the lin<k>.model.1.weight tensors
  std::string fid_weights;  ///< pt_inception-2015-12-05-6726825d.pth: rFID of two image folders
  std::string fvd_weights;  ///< i3d_pretrained_400.pt: rFVD of two video folders
};

/// `metrics A B`: prints one JSON object line {"psnr":..,"ssim":..,"lpips":..} on stdout
/// (means over frames for videos; see trainer/evaluation/image_metrics.h for PSNR's cap on
/// identical frames), "lpips" only when both weight files are given. Images and videos are told
/// apart by extension. Exit 0; 2 (message on stderr naming the file) for unreadable inputs, inputs
/// that differ in size or frame count, only one weight file, or weight files that do not fit.
/// With two folders, computeFolderMetrics().
int computeMetrics(const MetricsArgs& args);

/// `metrics A B` with two folders: files of the same relative name are paired (a file on one
/// side only is an error naming it), and the JSON line holds "pairs" and the mean "psnr", "ssim"
/// ("lpips") over the pairs; with --fid-weights (image folders) "rfid" and "rfid_samples", with
/// --fvd-weights (video folders) "rfvd", "rfvd_samples" and "rfvd_short_clips" (clips under 9
/// frames, named on stderr and left out). The Frechet distances follow pytorch-fid and
/// SEED-Voken (trainer/evaluation/); with no more samples than feature dimensions a warning
/// says the value is biased. Progress on stderr. Exit 0, or 2 naming the file or option.
int computeFolderMetrics(const MetricsArgs& args);

/// An image (one frame) or a whole video, told apart by extension. Throws MediaError naming
/// the file.
media::VideoFrames readMediaFrames(const std::string& path);
/// "64x48, 17 frames".
std::string describeFrames(const media::VideoFrames& frames);

}  // namespace tb::trainer::cli
