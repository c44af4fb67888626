#pragma once
// Convolutions of the MAGVIT-v2 tokenizer: causal 3-D convolution, modulated causal convolution,
// and the space / time down- and up-samplers. Tensors are videos `[B, C, T, H, W]`.

#include "core/config_choices.h"

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tb::trainer {

/// Throws std::invalid_argument "<field>: <message>" unless `ok`: the layers' option checks.
inline void requireOption(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw std::invalid_argument(field + ": " + message);
}

/// Kernel or size triple [t, h, w].
using Triple = std::array<std::int64_t, 3>;

/// What causal convolutions see before the first frame (model.time_padding): zero frames
/// (magvit2-pytorch), or copies of the first frame, so the first frame is coded like a still
/// scene instead of a cut from black.
using core::TimePadding;

/// `frames` frames put in front of dimension 2 (time of `[B, C, T, ...]`): zeros, or copies of
/// the first frame.
torch::Tensor padTimeFront(const torch::Tensor& x, std::int64_t frames, TimePadding mode);

struct CausalConv3dOptions {
  CausalConv3dOptions(std::int64_t in_channels, std::int64_t out_channels, Triple kernel)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_(kernel) {}
  TORCH_ARG(std::int64_t, in_channels);
  TORCH_ARG(std::int64_t, out_channels);
  /// [t, h, w]; h and w odd.
  TORCH_ARG(Triple, kernel);
  TORCH_ARG(std::int64_t, stride) = 1;    ///< along time only
  TORCH_ARG(std::int64_t, dilation) = 1;  ///< along time only
  TORCH_ARG(TimePadding, time_padding) = TimePadding::Zeros;
};

/// 3-D convolution, causal in time: `dilation x (kt - 1) + 1 - stride` frames (time_padding) are
/// padded in front, none behind, so output frame t sees input frames <= t x stride. Space is "same"
/// padded.
/// `[B, Cin, T, H, W] -> [B, Cout, T / stride, H, W]`.
class CausalConv3dImpl : public torch::nn::Module {
 public:
  explicit CausalConv3dImpl(const CausalConv3dOptions& options);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv3d conv{nullptr};

 private:
  CausalConv3dOptions m_options;
  std::int64_t m_time_pad = 0;
};
TORCH_MODULE(CausalConv3d);

/// StyleGAN2 modulated (and demodulated) causal 3-D convolution, no bias: weights are scaled per
/// sample by (cond + 1) along input channels. `x [B, C, T, H, W]`, `cond [B, C]` -> `[B, Cout, T,
/// H, W]`.
class Conv3dModImpl : public torch::nn::Module {
 public:
  Conv3dModImpl(std::int64_t dim, std::int64_t dim_out, std::int64_t spatial_kernel,
                std::int64_t time_kernel, bool demod = true,
                TimePadding time_padding = TimePadding::Zeros);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond);
  torch::Tensor weights;

 private:
  std::int64_t m_spatial_kernel, m_time_kernel;
  bool m_demod;
  TimePadding m_time_padding;
};
TORCH_MODULE(Conv3dMod);

}  // namespace tb::trainer
