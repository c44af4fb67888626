#pragma once
// Attention layers of the MAGVIT-v2 vocabulary: full attention with learned memory key/values,
// second-order Taylor linear attention, and the space / time blocks built from them.

#include "trainer/models/magvit_blocks.h"

#include <torch/torch.h>

#include <cstdint>

namespace tb::trainer {

struct AttentionOptions {
  explicit AttentionOptions(std::int64_t dim) : dim_(dim) {}
  TORCH_ARG(std::int64_t, dim);
  TORCH_ARG(std::int64_t, dim_head) = 32;
  TORCH_ARG(std::int64_t, heads) = 8;
  /// Learned key/value pairs prepended to every sequence (always visible, also when causal).
  TORCH_ARG(std::int64_t, num_mem_kv) = 4;
  TORCH_ARG(bool, causal) = false;
  /// > 0: adaptive RMSNorm on a conditioning vector of this width.
  TORCH_ARG(std::int64_t, dim_cond) = 0;
};

/// Multi-head softmax attention on sequences `[N, L, dim]` (pre-RMSNorm, no biases); returns the
/// update `[N, L, dim]`. `cond` is `[N, dim_cond]` when conditioned.
class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const AttentionOptions& options);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond = {});
  MaybeAdaptiveNorm norm{nullptr};
  torch::nn::Linear to_qkv{nullptr}, to_out{nullptr};
  torch::Tensor mem_kv;  ///< [2, heads, num_mem_kv, dim_head]

 private:
  AttentionOptions m_options;
};
TORCH_MODULE(Attention);

struct LinearAttentionOptions {
  explicit LinearAttentionOptions(std::int64_t dim) : dim_(dim) {}
  TORCH_ARG(std::int64_t, dim);
  TORCH_ARG(std::int64_t, dim_head) = 8;
  TORCH_ARG(std::int64_t, heads) = 16;
  TORCH_ARG(std::int64_t, dim_cond) = 0;
};

/// Linear attention with exp(q.k) replaced by its 2nd-order Taylor expansion
/// 1 + q.k + (q.k)^2 / 2 = phi(q).phi(k), phi(x) = [1, x, x (x) x / sqrt 2] (arXiv:2209.04881):
/// O(L x dim_head^2) per head. Sequences `[N, L, dim]` -> update `[N, L, dim]`.
class LinearAttentionImpl : public torch::nn::Module {
 public:
  explicit LinearAttentionImpl(const LinearAttentionOptions& options);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond = {});
  MaybeAdaptiveNorm norm{nullptr};
  torch::nn::Linear to_q{nullptr}, to_kv{nullptr}, to_out{nullptr};

 private:
  LinearAttentionOptions m_options;
};
TORCH_MODULE(LinearAttention);

/// `attend_space` / `linear_attend_space` / `cond_*`: x += attn(frame tokens H*W), then
/// x += FeedForward(x); each frame attends within itself only. `[B, C, T, H, W]` (or images
/// `[B, C, H, W]`) -> same shape.
class SpaceAttentionBlockImpl : public MagvitLayer {
 public:
  /// linear: Taylor linear attention instead of softmax attention. ff_dim_cond: condition the
  /// feed-forward too (cond_linear_attend_space), 0 otherwise.
  SpaceAttentionBlockImpl(const AttentionOptions& attn, const LinearAttentionOptions& linear,
                          bool use_linear, std::int64_t ff_mult, std::int64_t ff_dim_cond);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  Attention attn{nullptr};
  LinearAttention linear_attn{nullptr};
  FeedForward ff{nullptr};
};
TORCH_MODULE(SpaceAttentionBlock);

/// `attend_time` / `cond_attend_time`: token shift (half the channels delayed by one frame), then
/// causal attention along T per pixel; then token shift + feed-forward. Causal.
class TimeAttentionBlockImpl : public MagvitLayer {
 public:
  TimeAttentionBlockImpl(const AttentionOptions& attn, std::int64_t ff_mult);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) override;
  Attention attn{nullptr};
  FeedForward ff{nullptr};
};
TORCH_MODULE(TimeAttentionBlock);

/// Delay channels [C/2, C) by one frame (zeros enter at t = 0). `[B, C, T, H, W]`. With an
/// `owner`, in a TimeStream, the frame that enters is the previous chunk's last.
torch::Tensor tokenShift(const torch::Tensor& x, const void* owner = nullptr);

}  // namespace tb::trainer
