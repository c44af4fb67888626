#pragma once
// taming-transformers VQGAN (Esser et al. 2021): 2-D encoder/decoder with residual blocks and
// attention at low resolution, applied frame by frame to videos.

#include "core/run_config.h"
#include "trainer/models/pixel_range.h"
#include "trainer/models/tokenizer.h"

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace tb::trainer {

/// GroupNorm(gcd(32, C), C, eps 1e-6) -> SiLU -> conv3x3 -> GroupNorm -> SiLU -> conv3x3, plus a
/// 1x1 shortcut when channels change. `[N, Cin, H, W] -> [N, Cout, H, W]`.
class VqganResBlockImpl : public torch::nn::Module {
 public:
  VqganResBlockImpl(std::int64_t in_channels, std::int64_t out_channels);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::GroupNorm norm1{nullptr}, norm2{nullptr};
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, nin_shortcut{nullptr};
};
TORCH_MODULE(VqganResBlock);

/// Single-head self-attention over H*W with 1x1 q, k, v, proj_out convolutions (residual).
class VqganAttnBlockImpl : public torch::nn::Module {
 public:
  explicit VqganAttnBlockImpl(std::int64_t channels);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::GroupNorm norm{nullptr};
  torch::nn::Conv2d q{nullptr}, k{nullptr}, v{nullptr}, proj_out{nullptr};
};
TORCH_MODULE(VqganAttnBlock);

/// One resolution level: residual blocks, attention after each block (when the level's side is in
/// attn_resolutions), then a resampler (stride-2 conv down, or nearest x2 + conv3x3 up).
class VqganLevelImpl : public torch::nn::Module {
 public:
  VqganLevelImpl(std::int64_t in_channels, std::int64_t out_channels, std::int64_t blocks,
                 bool attention, int resample /* -1 down, 0 none, +1 up */);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::ModuleList block{nullptr}, attn{nullptr};
  torch::nn::Conv2d resample_conv{nullptr};

 private:
  int m_resample;
};
TORCH_MODULE(VqganLevel);

/// Encoder `[N, C, H, W] -> [N, z_channels, H/f, W/f]`, f = 2^(len(channel_mult) - 1).
class VqganEncoderImpl : public torch::nn::Module {
 public:
  VqganEncoderImpl(const core::VqganConfig& config, std::int64_t in_channels,
                   std::int64_t resolution);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv2d conv_in{nullptr}, conv_out{nullptr};
  torch::nn::ModuleList down{nullptr};
  VqganResBlock mid_block_1{nullptr}, mid_block_2{nullptr};
  VqganAttnBlock mid_attn_1{nullptr};
  torch::nn::GroupNorm norm_out{nullptr};
};
TORCH_MODULE(VqganEncoder);

/// Decoder `[N, z_channels, h, w] -> [N, C, h x f, w x f]`.
class VqganDecoderImpl : public torch::nn::Module {
 public:
  VqganDecoderImpl(const core::VqganConfig& config, std::int64_t out_channels,
                   std::int64_t resolution);
  torch::Tensor forward(const torch::Tensor& z);
  torch::nn::Conv2d conv_in{nullptr}, conv_out{nullptr};
  torch::nn::ModuleList up{nullptr};  ///< in execution order (lowest resolution first)
  VqganResBlock mid_block_1{nullptr}, mid_block_2{nullptr};
  VqganAttnBlock mid_attn_1{nullptr};
  torch::nn::GroupNorm norm_out{nullptr};
};
TORCH_MODULE(VqganDecoder);

/// VQGAN tokenizer: encoder -> quant_conv (z_channels -> quantizer.codebook_dim) -> quantizer ->
/// post_quant_conv -> decoder, per frame. Latent `[B, codebook_dim, T, h, w]`; T frames give
/// T latent frames (no time compression).
class VqganTokenizerImpl : public Tokenizer {
 public:
  VqganTokenizerImpl(const core::ModelConfig& config, std::int64_t image_size);

  torch::Tensor encode(const torch::Tensor& video, const torch::Tensor& cond = {}) override;
  torch::Tensor decode(const torch::Tensor& quantized, const torch::Tensor& cond = {}) override;
  std::shared_ptr<Quantizer> quantizer() const override { return m_quantizer; }
  torch::Tensor lastDecoderWeight() const override { return decoder->conv_out->weight; }
  TokenizerStats stats(std::int64_t frames, std::int64_t image_size) const override;
  bool codesTimeInChunks() const override { return true; }  ///< frame by frame
  std::array<std::int64_t, 3> tokenGrid(std::int64_t frames,
                                        std::int64_t image_size) const override;

  VqganEncoder encoder{nullptr};
  VqganDecoder decoder{nullptr};
  torch::nn::Conv2d quant_conv{nullptr}, post_quant_conv{nullptr};

 private:
  core::ModelConfig m_config;
  PixelRange m_pixel_range = PixelRange::MinusOneOne;
  std::shared_ptr<Quantizer> m_quantizer;
  std::int64_t m_factor = 1;
};
TORCH_MODULE(VqganTokenizer);

}  // namespace tb::trainer
