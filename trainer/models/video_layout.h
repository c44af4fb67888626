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

/// [B*T, C, H, W] -> [B, C, T, H, W]
inline torch::Tensor batchToFrames(const torch::Tensor& x, std::int64_t batch) {
  return x.reshape({batch, x.size(0) / batch, x.size(1), x.size(2), x.size(3)})
      .permute({0, 2, 1, 3, 4});
}

}  // namespace tb::trainer
