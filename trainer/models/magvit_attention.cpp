// Full and linear attention and the space/time attention blocks of MAGVIT-v2 (magvit_attention.h).
#include "trainer/models/magvit_attention.h"

#include "trainer/torch_compat.h"

#include "trainer/models/time_stream.h"
#include "trainer/models/video_layout.h"

#include <cmath>
#include <limits>
#include <string>

namespace tb::trainer {
namespace F = torch::nn::functional;
namespace {

torch::Tensor taylorFeatures(const torch::Tensor& x) {  // [..., d] -> [..., 1 + d + d^2]
  const auto ones = torch::ones_like(x.narrow(-1, 0, 1));
  auto second = (x.unsqueeze(-1) * x.unsqueeze(-2)).flatten(-2) * std::sqrt(0.5);
  return torch::cat({ones, x, second}, -1);
}

}  // namespace

AttentionImpl::AttentionImpl(const AttentionOptions& o) : m_options(o) {
  requireOption(o.dim() >= 1, "dim", "must be >= 1");
  requireOption(o.dim_head() >= 1, "model.attn_dim_head", "must be >= 1");
  requireOption(o.heads() >= 1, "model.attn_heads", "must be >= 1");
  requireOption(o.num_mem_kv() >= 0, "model.attn_num_mem_kv", "must be >= 0");
  const std::int64_t inner = o.dim_head() * o.heads();
  norm = register_module("norm", MaybeAdaptiveNorm(o.dim(), o.dim_cond(), false));
  to_qkv = register_module(
      "to_qkv", torch::nn::Linear(torch::nn::LinearOptions(o.dim(), inner * 3).bias(false)));
  if (o.num_mem_kv() > 0)
    mem_kv =
        register_parameter("mem_kv", torch::randn({2, o.heads(), o.num_mem_kv(), o.dim_head()}));
  to_out = register_module("to_out",
                           torch::nn::Linear(torch::nn::LinearOptions(inner, o.dim()).bias(false)));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& input, const torch::Tensor& cond) {
  const std::int64_t n = input.size(0), l = input.size(1), h = m_options.heads(),
                     d = m_options.dim_head();
  const auto x = norm(input, cond);
  auto qkv = to_qkv(x).view({n, l, 3, h, d}).permute({2, 0, 3, 1, 4});  // [3, N, h, L, d]
  auto q = qkv[0], k = qkv[1], v = qkv[2];
  // Causal attention in a TimeStream: the keys and values of the chunks before come first.
  std::int64_t past = 0;
  if (TimeStream* stream = TimeStream::active(); stream && m_options.causal()) {
    torch::Tensor& keys = stream->state(this, 0);
    torch::Tensor& values = stream->state(this, 1);
    if (keys.defined()) {
      past = keys.size(2);
      k = torch::cat({keys, k}, 2);
      v = torch::cat({values, v}, 2);
    }
    keys = k;
    values = v;
  }
  const std::int64_t m = m_options.num_mem_kv();
  if (m > 0) {
    k = torch::cat({mem_kv[0].unsqueeze(0).expand({n, h, m, d}), k}, 2);
    v = torch::cat({mem_kv[1].unsqueeze(0).expand({n, h, m, d}), v}, 2);
  }
  // The scores, their mask and softmax in fp32 under autocast too (a bf16 score cannot hold
  // float's lowest, and the softmax's sum is where bf16 loses most).
  auto scores = compat::inFp32(torch::matmul(q, k.transpose(-1, -2))) *
                (1.0 / std::sqrt(static_cast<double>(d)));  // [N,h,L,m+past+L]
  if (m_options.causal()) {
    // Query i sees the memory, the earlier chunks' keys and keys <= i.
    const auto mask = torch::ones({l, m + past + l},
                                  torch::TensorOptions().dtype(torch::kBool).device(x.device()))
                          .triu(m + past + 1);
    scores = scores.masked_fill(mask, -std::numeric_limits<float>::max());
  }
  const auto out = torch::matmul(torch::softmax(scores, -1), v);  // [N, h, L, d]
  return to_out(out.permute({0, 2, 1, 3}).reshape({n, l, h * d}));
}

LinearAttentionImpl::LinearAttentionImpl(const LinearAttentionOptions& o) : m_options(o) {
  requireOption(o.dim_head() >= 1, "model.linear_attn_dim_head", "must be >= 1");
  requireOption(o.heads() >= 1, "model.linear_attn_heads", "must be >= 1");
  const std::int64_t inner = o.dim_head() * o.heads();
  norm = register_module("norm", MaybeAdaptiveNorm(o.dim(), o.dim_cond(), false));
  to_q = register_module("to_q",
                         torch::nn::Linear(torch::nn::LinearOptions(o.dim(), inner).bias(false)));
  to_kv = register_module(
      "to_kv", torch::nn::Linear(torch::nn::LinearOptions(o.dim(), inner * 2).bias(false)));
  to_out = register_module("to_out",
                           torch::nn::Linear(torch::nn::LinearOptions(inner, o.dim()).bias(false)));
}

torch::Tensor LinearAttentionImpl::forward(const torch::Tensor& input, const torch::Tensor& cond) {
  const std::int64_t n = input.size(0), l = input.size(1), h = m_options.heads(),
                     d = m_options.dim_head();
  const auto x = norm(input, cond);
  auto q = to_q(x).view({n, l, h, d}).transpose(1, 2) * (1.0 / std::sqrt(static_cast<double>(d)));
  auto kv = to_kv(x).view({n, l, 2, h, d}).permute({2, 0, 3, 1, 4});
  auto k = kv[0], v = kv[1];
  q = taylorFeatures(q);
  k = taylorFeatures(k);                                      // [N, h, L, D']
  const auto kv_sum = torch::matmul(k.transpose(-1, -2), v);  // [N, h, D', d]
  const auto denom =
      torch::matmul(q, k.sum(2, true).transpose(-1, -2)).clamp_min(1e-5);  // [N, h, L, 1]
  const auto out = torch::matmul(q, kv_sum) / denom;                       // [N, h, L, d]
  return to_out(out.transpose(1, 2).reshape({n, l, h * d}));
}

SpaceAttentionBlockImpl::SpaceAttentionBlockImpl(const AttentionOptions& attn_options,
                                                 const LinearAttentionOptions& linear,
                                                 bool use_linear, std::int64_t ff_mult,
                                                 std::int64_t ff_dim_cond) {
  if (use_linear)
    linear_attn = register_module("attn", LinearAttention(linear));
  else
    attn = register_module("attn", Attention(attn_options));
  ff = register_module("ff", FeedForward(attn_options.dim(), ff_mult, ff_dim_cond));
}

torch::Tensor SpaceAttentionBlockImpl::forward(const torch::Tensor& input,
                                               const torch::Tensor& cond) {
  const bool image = input.dim() == 4;
  const auto x = image ? input.unsqueeze(2) : input;
  const std::int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
  const auto seq = x.permute({0, 2, 3, 4, 1}).reshape({b * t, h * w, c});
  const auto frame_cond = expandCond(cond, t);
  const auto upd = linear_attn ? linear_attn(seq, frame_cond) : attn(seq, frame_cond);
  auto y = x + upd.view({b, t, h, w, c}).permute({0, 4, 1, 2, 3});
  y = y + ff(y, cond);
  return image ? y.squeeze(2) : y;
}

torch::Tensor tokenShift(const torch::Tensor& x, const void* owner) {
  const auto halves = x.chunk(2, 1);
  TimeStream* stream = owner ? TimeStream::active() : nullptr;
  if (!stream) {
    const auto shifted = F::pad(halves[1], F::PadFuncOptions({0, 0, 0, 0, 1, -1}));
    return torch::cat({halves[0], shifted}, 1);
  }
  // The previous chunk's last frame (a zero frame first) in front, this chunk's last one out.
  const auto zeroFront = [](const torch::Tensor& v) {
    return F::pad(v, F::PadFuncOptions({0, 0, 0, 0, 1, 0}));
  };
  const auto shifted =
      stream->withHistory(owner, halves[1], 2, 1, zeroFront).narrow(2, 0, halves[1].size(2));
  return torch::cat({halves[0], shifted}, 1);
}

TimeAttentionBlockImpl::TimeAttentionBlockImpl(const AttentionOptions& attn_options,
                                               std::int64_t ff_mult) {
  requireOption(attn_options.dim() % 2 == 0, "model.layers",
                "attend_time needs an even channel count (token shift)");
  attn = register_module("attn", Attention(AttentionOptions(attn_options).causal(true)));
  ff = register_module("ff", FeedForward(attn_options.dim(), ff_mult, attn_options.dim_cond()));
}

torch::Tensor TimeAttentionBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  const std::int64_t b = x.size(0), h = x.size(3), w = x.size(4);
  const auto seq = pixelsToBatch(tokenShift(x, this)).transpose(1, 2);  // [B*H*W, T, C]
  const auto upd = attn(seq, expandCond(cond, h * w));
  auto y = x + batchToPixels(upd.transpose(1, 2), b, h, w);
  y = y + ff(tokenShift(y, ff.get()), cond);
  return y;
}

}  // namespace tb::trainer
