#include "trainer/evaluation/clip_scores.h"

#include "trainer/evaluation/image_metrics.h"
#include "trainer/media/frame_tensors.h"

namespace tb::trainer::metrics {

ClipScores scoreClip(const torch::Tensor& original, const torch::Tensor& recon, double fps) {
  ClipScores s;
  s.original = media::tensorToFrames(original, fps);
  s.decoded = media::tensorToFrames(recon, fps);
  const media::VideoFrames& a = s.original;
  const media::VideoFrames& b = s.decoded;
  checkComparable(a, b);
  const bool ssim_fits = a.width >= 11 && a.height >= 11;
  for (int t = 0; t < a.count; ++t) {
    s.frame_psnr.push_back(framePsnr(a.frame(t), b.frame(t), a.width, a.height));
    s.frame_ssim.push_back(ssim_fits ? frameSsim(a.frame(t), b.frame(t), a.width, a.height) : 0.0);
    s.psnr += s.frame_psnr.back();
    s.ssim += s.frame_ssim.back();
  }
  s.psnr /= a.count;
  s.ssim /= a.count;
  return s;
}

}  // namespace tb::trainer::metrics
