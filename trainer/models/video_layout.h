#pragma once
// Moving a video's time or space axes into the batch and back, so that 2-D and 1-D layers run
// on it (shared by the MAGVIT-v2 layers and VQGAN).

#include <torch/torch.h>

#include <cstdint>

namespace tb::trainer {

/// [B, C, T, H, W] -> [B*T, C, H, W]
inline torch::Tensor framesToBatch(const torch::Tensor& x) {
  return x.permute({0, 2, 1, 3, 4})
      .reshape({x.size(0) * x.size(2), x.size(1), x.size(3), x.size(4)});
}

/// [B*T, C, H, W] -> [B, C, T, H, W], contiguous: the layers after it (a padded convolution, a
/// residual sum, their backward) would otherwise each copy or stride through the permuted view.
inline torch::Tensor batchToFrames(const torch::Tensor& x, std::int64_t batch) {
  return x.reshape({batch, x.size(0) / batch, x.size(1), x.size(2), x.size(3)})
      .permute({0, 2, 1, 3, 4})
      .contiguous();
}

/// [B, C, T, H, W] -> [B*H*W, C, T]: every pixel's time series as a batch entry.
inline torch::Tensor pixelsToBatch(const torch::Tensor& x) {
  return x.permute({0, 3, 4, 1, 2})
      .reshape({x.size(0) * x.size(3) * x.size(4), x.size(1), x.size(2)});
}

/// [B*H*W, C, T] -> [B, C, T, H, W], contiguous (as batchToFrames).
inline torch::Tensor batchToPixels(const torch::Tensor& x, std::int64_t batch, std::int64_t h,
                                   std::int64_t w) {
  return x.reshape({batch, h, w, x.size(1), x.size(2)}).permute({0, 3, 4, 1, 2}).contiguous();
}

/// The conditioning vector `[B, D]` repeated for a batch packed as above (`[B*r, ...]`,
/// sample-major); undefined stays undefined.
inline torch::Tensor expandCond(const torch::Tensor& cond, std::int64_t repeats) {
  return cond.defined() ? cond.repeat_interleave(repeats, 0) : cond;
}

}  // namespace tb::trainer
