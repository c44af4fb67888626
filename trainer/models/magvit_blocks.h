#pragma once
// Building blocks of the MAGVIT-v2 layer vocabulary (magvit2-pytorch): norms, residual units,
// feed-forward, gated linear recurrence, space/time samplers. Videos are `[B, C, T, H, W]`.
// Every block is causal in time: output frame t depends on input frames <= t only.

#include "trainer/models/causal_conv.h"
#include "trainer/models/layer_runner.h"

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer {

/// One entry of a MAGVIT-v2 encoder or decoder stack. `cond` is the expanded conditioning vector
/// `[B, dim_cond x 4]` for cond_* layers, an undefined tensor otherwise (and ignored).
class MagvitLayer : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) = 0;
};

/// RMSNorm: l2-normalise along channels, times sqrt(dim) x gamma. Channel-last `[..., dim]`, or
/// channel-first `[B, dim, T, H, W]` (gamma shaped [dim, 1, 1, 1]).
class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(std::int64_t dim, bool channel_first);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor gamma;

 private:
  bool m_channel_first;
  double m_scale;
};
TORCH_MODULE(RMSNorm);

/// RMSNorm whose gain comes from the conditioning vector: gamma = to_gamma(cond) (initialised
/// to 1). `x` channel-last `[N, L, dim]` with `cond [N, dim_cond]`, or channel-first
/// `[N, dim, T, H, W]`.
class AdaptiveRMSNormImpl : public torch::nn::Module {
 public:
  AdaptiveRMSNormImpl(std::int64_t dim, std::int64_t dim_cond, bool channel_first);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond);
  torch::nn::Linear to_gamma{nullptr};

 private:
  bool m_channel_first;
  double m_scale;
};
TORCH_MODULE(AdaptiveRMSNorm);

/// Plain or adaptive RMSNorm, chosen at construction (dim_cond > 0 = adaptive).
class MaybeAdaptiveNormImpl : public torch::nn::Module {
 public:
  MaybeAdaptiveNormImpl(std::int64_t dim, std::int64_t dim_cond, bool channel_first);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond);
  bool conditioned() const { return static_cast<bool>(m_adaptive); }

 private:
  RMSNorm m_plain{nullptr};
  AdaptiveRMSNorm m_adaptive{nullptr};
};
TORCH_MODULE(MaybeAdaptiveNorm);

/// Global-context squeeze-excite gate per frame (arXiv:2012.13375): softmax(to_k(x)) pools each
/// frame to one vector, an MLP turns it into sigmoid gates on x, initialised to
/// sigmoid(`gate_bias`) (magvit2-pytorch: -10, gates shut).
class SqueezeExciteImpl : public torch::nn::Module {
 public:
  explicit SqueezeExciteImpl(std::int64_t dim, double gate_bias = -10.0);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv2d to_k{nullptr}, net_in{nullptr}, net_out{nullptr};
};
TORCH_MODULE(SqueezeExcite);

/// `residual`: x + SE(ELU(conv1x1(ELU(causal_conv_k(x))))). Shape-preserving.
class ResidualUnitImpl : public MagvitLayer {
 public:
  ResidualUnitImpl(std::int64_t dim, std::int64_t kernel,
                   TimePadding time_padding = TimePadding::Zeros, double gate_bias = -10.0);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  CausalConv3d conv{nullptr};
  torch::nn::Conv3d conv_out{nullptr};
  SqueezeExcite gate{nullptr};
};
TORCH_MODULE(ResidualUnit);

/// `cond_residual`: x + ELU(conv1x1(ELU(modulated_causal_conv_k(x, to_cond(cond))))).
class ResidualUnitModImpl : public MagvitLayer {
 public:
  ResidualUnitModImpl(std::int64_t dim, std::int64_t kernel, std::int64_t dim_cond,
                      TimePadding time_padding = TimePadding::Zeros);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  torch::nn::Linear to_cond{nullptr};
  Conv3dMod conv{nullptr};
  torch::nn::Conv3d conv_out{nullptr};
};
TORCH_MODULE(ResidualUnitMod);

/// Feed-forward on channel-first videos: (adaptive) RMSNorm -> 1x1x1 conv to 2 x inner ->
/// GEGLU -> 1x1x1 conv, inner = int(dim x mult x 2/3). Returns the update (no residual).
class FeedForwardImpl : public torch::nn::Module {
 public:
  FeedForwardImpl(std::int64_t dim, std::int64_t mult, std::int64_t dim_cond = 0);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond = {});
  MaybeAdaptiveNorm norm{nullptr};
  torch::nn::Conv3d proj_in{nullptr}, proj_out{nullptr};
};
TORCH_MODULE(FeedForward);

/// `gateloop_time`: per pixel, x + q_t * h_t with h_t = sigmoid(a_t) h_{t-1} + kv_t, where
/// q, kv, a are linear in RMSNorm(x_t) (SimpleGateLoopLayer).
class GateLoopTimeImpl : public MagvitLayer {
 public:
  explicit GateLoopTimeImpl(std::int64_t dim);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  RMSNorm norm{nullptr};
  torch::nn::Linear to_qkva{nullptr};
};
TORCH_MODULE(GateLoopTime);

/// `compress_space` (encoder): 3x3 stride-2 conv per frame. `[B, C, T, H, W] -> [B, Cout, T, H/2,
/// W/2]`.
class SpatialDownsample2xImpl : public MagvitLayer {
 public:
  SpatialDownsample2xImpl(std::int64_t dim, std::int64_t dim_out);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  torch::nn::Conv2d conv{nullptr};
};
TORCH_MODULE(SpatialDownsample2x);

/// `compress_time` (encoder): kernel-3 stride-2 conv along time. Lagged (magvit2-pytorch): two
/// frames in front, so output frame i sees input frames 2i-2 .. 2i, and the decoder turns it
/// into frames 2i, 2i+1, so no output frame depends on a later input frame. The price of this
/// strict per-frame causality is a lag: with n compress_time layers and the encoder's 2^n - 1
/// leading padding frames, latent frame j holds input frames up to 2^n (j - 1) + 1 and is decoded
/// into frames 2^n (j - 1) + 1 .. 2^n j, i.e. those frames are predicted from earlier ones (the
/// first frame is reconstructed without seeing it). Blocks: one frame in front, so output frame
/// i sees input frames 2i-1 .. 2i+1, both frames it is decoded into among them: a frame depends
/// on the later frames of its own token, never on a later token. `[B, C, T, H, W] -> [B, Cout,
/// T/2, H, W]` (T even).
class TimeDownsample2xImpl : public MagvitLayer {
 public:
  TimeDownsample2xImpl(std::int64_t dim, std::int64_t dim_out,
                       TimePadding time_padding = TimePadding::Zeros, bool blocks = false);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  torch::nn::Conv1d conv{nullptr};

 private:
  TimePadding m_time_padding;
  std::int64_t m_front;  // frames padded in front: 2 lagged, 1 blocks
};
TORCH_MODULE(TimeDownsample2x);

/// `compress_space` (decoder): 1x1 conv to 4 x Cout, SiLU, depth-to-space.
/// `[B, C, T, H, W] -> [B, Cout, T, 2H, 2W]`.
class SpatialUpsample2xImpl : public MagvitLayer {
 public:
  SpatialUpsample2xImpl(std::int64_t dim, std::int64_t dim_out);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  torch::nn::Conv2d conv{nullptr};
};
TORCH_MODULE(SpatialUpsample2x);

/// `compress_time` (decoder): 1x1 conv to 2 x Cout along time, SiLU, depth-to-time.
/// `[B, C, T, H, W] -> [B, Cout, 2T, H, W]` (frame 2t and 2t+1 from input frame t: causal).
class TimeUpsample2xImpl : public MagvitLayer {
 public:
  TimeUpsample2xImpl(std::int64_t dim, std::int64_t dim_out);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  torch::nn::Conv1d conv{nullptr};
};
TORCH_MODULE(TimeUpsample2x);

/// Layers applied in order (`consecutive_residual` and whole encoder/decoder stacks); children
/// are named "0", "1", ...
class MagvitSequenceImpl : public MagvitLayer {
 public:
  MagvitSequenceImpl() = default;
  void append(std::shared_ptr<MagvitLayer> layer);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  std::size_t size() const { return m_layers.size(); }
  const std::shared_ptr<MagvitLayer>& at(std::size_t i) const { return m_layers.at(i); }
  /// Layer `i` keeps only its input for backward and recomputes its activations there
  /// (train.activation_checkpointing; see activation_checkpoint.h).
  void setCheckpointed(std::size_t i, bool on) { m_checkpointed.at(i) = on; }
  /// Layer `i` runs through `runner` under the name `<prefix>.<i>` (zero3; empty: plain forward).
  void setRunner(LayerRunner runner, std::string prefix) {
    m_runner = std::move(runner);
    m_prefix = std::move(prefix);
  }

 private:
  std::vector<std::shared_ptr<MagvitLayer>> m_layers;
  std::vector<bool> m_checkpointed;
  LayerRunner m_runner;
  std::string m_prefix;
};
TORCH_MODULE(MagvitSequence);

}  // namespace tb::trainer
