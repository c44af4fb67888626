#pragma once
// Full-reference image quality metrics on uint8 RGB frames: PSNR and SSIM. Plain C++, no torch.
// Definitions follow shared/fixtures/lpips/README.md (and skimage's structural_similarity).

#include "trainer/media/video_frames.h"

namespace tb::trainer::metrics {

/// PSNR reported for identical frames (MSE 0), and the ceiling of every per-frame value, in dB.
/// A finite ceiling keeps the result JSON-serialisable and a video's mean over frames meaningful
/// when some frames are identical. Only MSE below 255^2 * 1e-10 (about 6.5e-6) reaches it.
constexpr double kPsnrMax = 100.0;

/// PSNR in dB of one frame pair: 10 * log10(255^2 / MSE), MSE in float64 over all
/// width * height * 3 values, capped at kPsnrMax.
double framePsnr(const uint8_t* a, const uint8_t* b, int width, int height);

/// SSIM in [-1, 1] of one frame pair (RGB24, row-major): per channel on float64 [0, 255],
/// 11-tap Gaussian window (sigma 1.5), K1 = 0.01, K2 = 0.03, population (co)variances, the SSIM
/// map averaged without its 5-pixel border, then the mean over the three channels.
/// Needs width and height >= 11.
double frameSsim(const uint8_t* a, const uint8_t* b, int width, int height);

/// Mean over frames of framePsnr. Throws std::invalid_argument when the sizes or frame counts
/// differ, when there are no frames or when a VideoFrames is not consistent().
double psnr(const media::VideoFrames& a, const media::VideoFrames& b);

/// Mean over frames of frameSsim. Throws std::invalid_argument like psnr, and also for frames
/// smaller than 11 x 11.
double ssim(const media::VideoFrames& a, const media::VideoFrames& b);

/// Throws std::invalid_argument unless `a` and `b` are consistent, non-empty and of equal
/// size and frame count. The message states both sizes ("64x64x1 vs 128x128x1").
void checkComparable(const media::VideoFrames& a, const media::VideoFrames& b);

}  // namespace tb::trainer::metrics
