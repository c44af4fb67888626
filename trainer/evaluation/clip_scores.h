#pragma once
// The one scoring of a reconstructed clip that validation (`valid/psnr`, `valid/ssim`), `compare`
// and the classic VQ reference share, so their figures are the same number for the same clip.

#include "trainer/media/video_frames.h"

#include <torch/torch.h>

#include <vector>

namespace tb::trainer::metrics {

/// Scores of one clip, on the 8-bit frames a viewer sees.
struct ClipScores {
  std::vector<double> frame_psnr;  ///< dB per frame (framePsnr: capped at kPsnrMax)
  std::vector<double> frame_ssim;  ///< per frame (frameSsim); 0 for frames under 11 x 11
  double psnr = 0;                 ///< mean of frame_psnr, dB
  double ssim = 0;                 ///< mean of frame_ssim
  media::VideoFrames original;     ///< the 8-bit frames scored
  media::VideoFrames decoded;
};

/// Scores `recon` against `original`, both `[3, T, H, W]` (or `[3, H, W]`) in [-1, 1] on any
/// device: each is clamped and rounded to 8-bit frames (media::tensorToFrames, `fps` recorded),
/// then PSNR and SSIM per frame and their means over frames. Throws std::invalid_argument when
/// the shapes differ.
ClipScores scoreClip(const torch::Tensor& original, const torch::Tensor& recon, double fps = 8.0);

}  // namespace tb::trainer::metrics
