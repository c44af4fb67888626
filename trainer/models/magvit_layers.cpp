// Implementation of the MAGVIT-v2 layer vocabulary (causal_conv.h, magvit_blocks.h,
// magvit_attention.h).
#include "trainer/models/activation_checkpoint.h"
#include "trainer/models/causal_conv.h"
#include "trainer/models/magvit_attention.h"
#include "trainer/models/magvit_blocks.h"
#include "trainer/models/video_layout.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace tb::trainer {
namespace F = torch::nn::functional;
namespace {

void require(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw std::invalid_argument(field + ": " + message);
}

// [B, C, T, H, W] -> [B*H*W, C, T]
torch::Tensor pixelsToBatch(const torch::Tensor& x) {
  return x.permute({0, 3, 4, 1, 2})
      .reshape({x.size(0) * x.size(3) * x.size(4), x.size(1), x.size(2)});
}
// [B*H*W, C, T] -> [B, C, T, H, W]
torch::Tensor batchToPixels(const torch::Tensor& x, std::int64_t batch, std::int64_t h,
                            std::int64_t w) {
  return x.reshape({batch, h, w, x.size(1), x.size(2)}).permute({0, 3, 4, 1, 2});
}
// Repeat cond [B, D] for packed batches [B*r, ...] (sample-major).
torch::Tensor expandCond(const torch::Tensor& cond, std::int64_t repeats) {
  return cond.defined() ? cond.repeat_interleave(repeats, 0) : cond;
}

torch::Tensor taylorFeatures(const torch::Tensor& x) {  // [..., d] -> [..., 1 + d + d^2]
  const auto ones = torch::ones_like(x.narrow(-1, 0, 1));
  auto second = (x.unsqueeze(-1) * x.unsqueeze(-2)).flatten(-2) * std::sqrt(0.5);
  return torch::cat({ones, x, second}, -1);
}

// Residual units run their ELUs in place on the convolutions' outputs, which no backward needs:
// autograd keeps the ELU's result (which the next layer keeps anyway) instead of a second copy,
// two of the five activations a unit kept (README configuration's generator step: README
// Performance).
torch::Tensor eluInPlace(const torch::Tensor& x) {
  return F::elu(x, F::ELUFuncOptions().inplace(true));
}

}  // namespace

// ---- convolutions --------------------------------------------------------------------------

CausalConv3dImpl::CausalConv3dImpl(const CausalConv3dOptions& o) : m_options(o) {
  const auto& k = o.kernel();
  require(o.in_channels() >= 1 && o.out_channels() >= 1, "channels", "must be >= 1");
  require(k[0] >= 1 && k[1] % 2 == 1 && k[2] % 2 == 1, "kernel",
          "time kernel must be >= 1 and spatial kernels odd, got [" + std::to_string(k[0]) + ", " +
              std::to_string(k[1]) + ", " + std::to_string(k[2]) + "]");
  require(o.stride() >= 1 && o.dilation() >= 1, "stride", "stride and dilation must be >= 1");
  m_time_pad = o.dilation() * (k[0] - 1) + (1 - o.stride());
  require(m_time_pad >= 0, "stride", "must not exceed the time kernel");
  conv = register_module(
      "conv", torch::nn::Conv3d(
                  torch::nn::Conv3dOptions(o.in_channels(), o.out_channels(), {k[0], k[1], k[2]})
                      .stride({o.stride(), 1, 1})
                      .dilation({o.dilation(), 1, 1})));
}

TimePadding parseTimePadding(const std::string& name) {
  if (name == "zeros") return TimePadding::Zeros;
  if (name == "replicate") return TimePadding::Replicate;
  throw std::invalid_argument("model.time_padding: expected \"zeros\" or \"replicate\", got \"" +
                              name + "\"");
}

torch::Tensor padTimeFront(const torch::Tensor& x, std::int64_t frames, TimePadding mode) {
  if (frames == 0) return x;
  if (mode == TimePadding::Zeros) {
    std::vector<std::int64_t> pad(2 * static_cast<std::size_t>(x.dim() - 2), 0);
    pad[pad.size() - 2] = frames;  // F::pad lists the last dimension first: time is the last pair
    return F::pad(x, F::PadFuncOptions(pad));
  }
  std::vector<std::int64_t> repeat(static_cast<std::size_t>(x.dim()), -1);
  repeat[2] = frames;
  return torch::cat({x.narrow(2, 0, 1).expand(repeat), x}, 2);
}

// Spatial "same" zero padding and causal time padding: one pad call for zero frames (as before
// time_padding existed), the copies first otherwise.
torch::Tensor padCausal(const torch::Tensor& x, std::int64_t time_pad, std::int64_t kh,
                        std::int64_t kw, TimePadding mode) {
  if (mode == TimePadding::Zeros) {
    return F::pad(x, F::PadFuncOptions({kw / 2, kw / 2, kh / 2, kh / 2, time_pad, 0}));
  }
  return F::pad(padTimeFront(x, time_pad, mode),
                F::PadFuncOptions({kw / 2, kw / 2, kh / 2, kh / 2}));
}

torch::Tensor CausalConv3dImpl::forward(const torch::Tensor& x) {
  const auto& k = m_options.kernel();
  return conv(padCausal(x, m_time_pad, k[1], k[2], m_options.time_padding()));
}

Conv3dModImpl::Conv3dModImpl(std::int64_t dim, std::int64_t dim_out, std::int64_t spatial_kernel,
                             std::int64_t time_kernel, bool demod, TimePadding time_padding)
    : m_spatial_kernel(spatial_kernel),
      m_time_kernel(time_kernel),
      m_demod(demod),
      m_time_padding(time_padding) {
  require(spatial_kernel % 2 == 1 && time_kernel % 2 == 1, "residual_conv_kernel", "must be odd");
  weights = register_parameter(
      "weights", torch::empty({dim_out, dim, time_kernel, spatial_kernel, spatial_kernel}));
  torch::nn::init::kaiming_normal_(weights, 0, torch::kFanIn, torch::kLinear);
}

torch::Tensor Conv3dModImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  TORCH_CHECK(cond.defined() && cond.dim() == 2 && cond.size(0) == x.size(0),
              "Conv3dMod needs cond [B, C]");
  const std::int64_t b = x.size(0);
  auto w = weights.unsqueeze(0) * (cond.view({b, 1, -1, 1, 1, 1}) + 1);  // [b, o, i, kt, kh, kw]
  if (m_demod) w = w * w.pow(2).sum({2, 3, 4, 5}, true).clamp_min(1e-8).rsqrt();
  auto fmap = padCausal(x, m_time_kernel - 1, m_spatial_kernel, m_spatial_kernel, m_time_padding);
  fmap = fmap.reshape({1, b * x.size(1), fmap.size(2), fmap.size(3), fmap.size(4)});
  auto out = F::conv3d(fmap, w.flatten(0, 1), F::Conv3dFuncOptions().groups(b));
  return out.reshape({b, -1, out.size(2), out.size(3), out.size(4)});
}

// ---- norms ---------------------------------------------------------------------------------

RMSNormImpl::RMSNormImpl(std::int64_t dim, bool channel_first)
    : m_channel_first(channel_first), m_scale(std::sqrt(static_cast<double>(dim))) {
  gamma =
      register_parameter("gamma", channel_first ? torch::ones({dim, 1, 1, 1}) : torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  const auto n = F::normalize(x, F::NormalizeFuncOptions().dim(m_channel_first ? 1 : -1));
  if (!m_channel_first) return n * m_scale * gamma;
  std::vector<std::int64_t> shape(static_cast<std::size_t>(x.dim()), 1);
  shape[1] = -1;
  return n * m_scale * gamma.view(shape);
}

AdaptiveRMSNormImpl::AdaptiveRMSNormImpl(std::int64_t dim, std::int64_t dim_cond,
                                         bool channel_first)
    : m_channel_first(channel_first), m_scale(std::sqrt(static_cast<double>(dim))) {
  to_gamma = register_module("to_gamma", torch::nn::Linear(dim_cond, dim));
  torch::NoGradGuard no_grad;
  to_gamma->weight.zero_();
  to_gamma->bias.fill_(1.0);
}

torch::Tensor AdaptiveRMSNormImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  TORCH_CHECK(cond.defined() && cond.size(0) == x.size(0),
              "adaptive RMSNorm needs cond [N, dim_cond] with N = ", x.size(0));
  auto gamma = to_gamma(cond);  // [N, dim]
  if (m_channel_first) {
    std::vector<std::int64_t> shape{gamma.size(0), gamma.size(1)};
    shape.resize(static_cast<std::size_t>(x.dim()), 1);
    gamma = gamma.view(shape);
  } else {
    std::vector<std::int64_t> shape(static_cast<std::size_t>(x.dim()), 1);
    shape.front() = gamma.size(0);
    shape.back() = gamma.size(1);
    gamma = gamma.view(shape);
  }
  return F::normalize(x, F::NormalizeFuncOptions().dim(m_channel_first ? 1 : -1)) * m_scale * gamma;
}

MaybeAdaptiveNormImpl::MaybeAdaptiveNormImpl(std::int64_t dim, std::int64_t dim_cond,
                                             bool channel_first) {
  if (dim_cond > 0)
    m_adaptive = register_module("norm", AdaptiveRMSNorm(dim, dim_cond, channel_first));
  else
    m_plain = register_module("norm", RMSNorm(dim, channel_first));
}

torch::Tensor MaybeAdaptiveNormImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  return m_adaptive ? m_adaptive(x, cond) : m_plain(x);
}

// ---- residual units ------------------------------------------------------------------------

SqueezeExciteImpl::SqueezeExciteImpl(std::int64_t dim, double gate_bias) {
  const std::int64_t hidden = std::max<std::int64_t>(16, dim / 2);
  to_k = register_module("to_k", torch::nn::Conv2d(torch::nn::Conv2dOptions(dim, 1, 1)));
  net_in = register_module("net_in", torch::nn::Conv2d(torch::nn::Conv2dOptions(dim, hidden, 1)));
  net_out = register_module("net_out", torch::nn::Conv2d(torch::nn::Conv2dOptions(hidden, dim, 1)));
  torch::NoGradGuard no_grad;
  net_out->weight.zero_();
  net_out->bias.fill_(gate_bias);
}

// Per frame: softmax-weighted pooling of the pixels (weights from to_k), a two-layer gate per
// channel, x * gate. Computed on [B, C, T, H, W] as it is: regrouping it into a batch of frames
// [B*T, C, H, W] copied the whole activation, and the backward kept that copy.
torch::Tensor SqueezeExciteImpl::forward(const torch::Tensor& input) {
  const bool is_video = input.dim() == 5;
  const auto x = is_video ? input : input.unsqueeze(2);  // [B, C, T, H, W]
  const std::int64_t b = x.size(0), c = x.size(1), t = x.size(2);
  const auto k = F::conv3d(x, to_k->weight.unsqueeze(2), F::Conv3dFuncOptions().bias(to_k->bias));
  const auto context = torch::softmax(k.flatten(3), -1);                 // [B, 1, T, HW]
  const auto pooled = (x.flatten(3) * context).sum(-1);                  // [B, C, T]
  const auto frames = pooled.transpose(1, 2).reshape({b * t, c, 1, 1});  // [B*T, C, 1, 1]
  const auto gates = torch::sigmoid(
      net_out(F::leaky_relu(net_in(frames), F::LeakyReLUFuncOptions().negative_slope(0.1))));
  const auto out = gates.view({b, t, c, 1, 1}).transpose(1, 2) * x;
  return is_video ? out : out.squeeze(2);
}

ResidualUnitImpl::ResidualUnitImpl(std::int64_t dim, std::int64_t kernel, TimePadding time_padding,
                                   double gate_bias) {
  conv = register_module(
      "conv",
      CausalConv3d(
          CausalConv3dOptions(dim, dim, {kernel, kernel, kernel}).time_padding(time_padding)));
  conv_out = register_module("conv_out", torch::nn::Conv3d(torch::nn::Conv3dOptions(dim, dim, 1)));
  gate = register_module("gate", SqueezeExcite(dim, gate_bias));
}

torch::Tensor ResidualUnitImpl::forward(const torch::Tensor& x, const torch::Tensor& /*cond*/) {
  return gate(eluInPlace(conv_out(eluInPlace(conv(x))))) + x;
}

ResidualUnitModImpl::ResidualUnitModImpl(std::int64_t dim, std::int64_t kernel,
                                         std::int64_t dim_cond, TimePadding time_padding) {
  require(dim_cond > 0, "model.dim_cond", "cond_residual needs dim_cond > 0");
  to_cond = register_module("to_cond", torch::nn::Linear(dim_cond, dim));
  conv = register_module("conv", Conv3dMod(dim, dim, kernel, kernel, true, time_padding));
  conv_out = register_module("conv_out", torch::nn::Conv3d(torch::nn::Conv3dOptions(dim, dim, 1)));
}

torch::Tensor ResidualUnitModImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  return eluInPlace(conv_out(eluInPlace(conv(x, to_cond(cond))))) + x;
}

FeedForwardImpl::FeedForwardImpl(std::int64_t dim, std::int64_t mult, std::int64_t dim_cond) {
  const auto inner = static_cast<std::int64_t>(static_cast<double>(dim * mult) * 2.0 / 3.0);
  norm = register_module("norm", MaybeAdaptiveNorm(dim, dim_cond, true));
  proj_in =
      register_module("proj_in", torch::nn::Conv3d(torch::nn::Conv3dOptions(dim, inner * 2, 1)));
  proj_out =
      register_module("proj_out", torch::nn::Conv3d(torch::nn::Conv3dOptions(inner, dim, 1)));
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& input, const torch::Tensor& cond) {
  const bool image = input.dim() == 4;
  const auto x = image ? input.unsqueeze(2) : input;
  const auto h = proj_in(norm(x, cond)).chunk(2, 1);
  const auto out = proj_out(F::gelu(h[1]) * h[0]);
  return image ? out.squeeze(2) : out;
}

GateLoopTimeImpl::GateLoopTimeImpl(std::int64_t dim) {
  norm = register_module("norm", RMSNorm(dim, false));
  to_qkva = register_module("to_qkva",
                            torch::nn::Linear(torch::nn::LinearOptions(dim, dim * 3).bias(false)));
}

torch::Tensor GateLoopTimeImpl::forward(const torch::Tensor& x, const torch::Tensor& /*cond*/) {
  const std::int64_t b = x.size(0), h = x.size(3), w = x.size(4), t = x.size(2);
  const auto seq = pixelsToBatch(x).transpose(1, 2);  // [N, T, C]
  const auto qkva = to_qkva(norm(seq)).chunk(3, -1);
  const auto a = torch::sigmoid(qkva[2]);
  std::vector<torch::Tensor> states;
  states.reserve(static_cast<std::size_t>(t));
  torch::Tensor state = torch::zeros_like(qkva[1].select(1, 0));
  for (std::int64_t i = 0; i < t; ++i) {
    state = a.select(1, i) * state + qkva[1].select(1, i);
    states.push_back(state);
  }
  const auto out = qkva[0] * torch::stack(states, 1);  // [N, T, C]
  return batchToPixels(out.transpose(1, 2), b, h, w) + x;
}

// ---- samplers ------------------------------------------------------------------------------

SpatialDownsample2xImpl::SpatialDownsample2xImpl(std::int64_t dim, std::int64_t dim_out) {
  conv = register_module(
      "conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(dim, dim_out, 3).stride(2).padding(1)));
}
torch::Tensor SpatialDownsample2xImpl::forward(const torch::Tensor& x,
                                               const torch::Tensor& /*cond*/) {
  return batchToFrames(conv(framesToBatch(x)), x.size(0));
}

TimeDownsample2xImpl::TimeDownsample2xImpl(std::int64_t dim, std::int64_t dim_out,
                                           TimePadding time_padding)
    : m_time_padding(time_padding) {
  conv = register_module("conv",
                         torch::nn::Conv1d(torch::nn::Conv1dOptions(dim, dim_out, 3).stride(2)));
}
torch::Tensor TimeDownsample2xImpl::forward(const torch::Tensor& x, const torch::Tensor& /*cond*/) {
  // Two frames in front (zeros, as magvit2-pytorch, or copies): output i sees inputs 2i-2 .. 2i
  // only, so the decoder's frames 2i, 2i+1 (from output i) never see a later input frame.
  const auto seq = padTimeFront(pixelsToBatch(x), 2, m_time_padding);
  return batchToPixels(conv(seq), x.size(0), x.size(3), x.size(4));
}

SpatialUpsample2xImpl::SpatialUpsample2xImpl(std::int64_t dim, std::int64_t dim_out) {
  conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(dim, dim_out * 4, 1)));
  // Each group of 4 sub-pixels starts with the same filter (no checkerboard at init).
  torch::NoGradGuard no_grad;
  auto w = torch::empty({dim_out, dim, 1, 1});
  torch::nn::init::kaiming_uniform_(w);
  conv->weight.copy_(w.repeat_interleave(4, 0));
  conv->bias.zero_();
}
torch::Tensor SpatialUpsample2xImpl::forward(const torch::Tensor& x,
                                             const torch::Tensor& /*cond*/) {
  auto y = torch::silu(conv(framesToBatch(x)));  // [N, 4C, H, W]
  y = F::pixel_shuffle(y, 2);                    // 'b (c p1 p2) h w -> b c (h p1) (w p2)'
  return batchToFrames(y, x.size(0));
}

TimeUpsample2xImpl::TimeUpsample2xImpl(std::int64_t dim, std::int64_t dim_out) {
  conv = register_module("conv", torch::nn::Conv1d(torch::nn::Conv1dOptions(dim, dim_out * 2, 1)));
  torch::NoGradGuard no_grad;
  auto w = torch::empty({dim_out, dim, 1});
  torch::nn::init::kaiming_uniform_(w);
  conv->weight.copy_(w.repeat_interleave(2, 0));
  conv->bias.zero_();
}
torch::Tensor TimeUpsample2xImpl::forward(const torch::Tensor& x, const torch::Tensor& /*cond*/) {
  auto y = torch::silu(conv(pixelsToBatch(x)));  // [N, 2C, T]
  const std::int64_t n = y.size(0), c = y.size(1) / 2, t = y.size(2);
  y = y.view({n, c, 2, t})
          .permute({0, 1, 3, 2})
          .reshape({n, c, t * 2});  // 'b (c p) t -> b c (t p)'
  return batchToPixels(y, x.size(0), x.size(3), x.size(4));
}

void MagvitSequenceImpl::append(std::shared_ptr<MagvitLayer> layer) {
  register_module(std::to_string(m_layers.size()), layer);
  m_layers.push_back(std::move(layer));
  m_checkpointed.push_back(false);
}

torch::Tensor MagvitSequenceImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  torch::Tensor y = x;
  for (std::size_t i = 0; i < m_layers.size(); ++i) {
    const torch::Tensor in = y;
    auto forward = [&] {
      return m_checkpointed[i] ? checkpointedForward(*m_layers[i], in, cond)
                               : m_layers[i]->forward(in, cond);
    };
    y = m_runner ? m_runner(m_prefix + "." + std::to_string(i), forward) : forward();
  }
  return y;
}

// ---- attention -----------------------------------------------------------------------------

AttentionImpl::AttentionImpl(const AttentionOptions& o) : m_options(o) {
  require(o.dim() >= 1, "dim", "must be >= 1");
  require(o.dim_head() >= 1, "model.attn_dim_head", "must be >= 1");
  require(o.heads() >= 1, "model.attn_heads", "must be >= 1");
  require(o.num_mem_kv() >= 0, "model.attn_num_mem_kv", "must be >= 0");
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
  const std::int64_t m = m_options.num_mem_kv();
  if (m > 0) {
    k = torch::cat({mem_kv[0].unsqueeze(0).expand({n, h, m, d}), k}, 2);
    v = torch::cat({mem_kv[1].unsqueeze(0).expand({n, h, m, d}), v}, 2);
  }
  auto scores = torch::matmul(q, k.transpose(-1, -2)) *
                (1.0 / std::sqrt(static_cast<double>(d)));  // [N,h,L,m+L]
  if (m_options.causal()) {
    // Query i sees the memory and keys <= i.
    const auto mask =
        torch::ones({l, l + m}, torch::TensorOptions().dtype(torch::kBool).device(x.device()))
            .triu(m + 1);
    scores = scores.masked_fill(mask, -std::numeric_limits<float>::max());
  }
  const auto out = torch::matmul(torch::softmax(scores, -1), v);  // [N, h, L, d]
  return to_out(out.permute({0, 2, 1, 3}).reshape({n, l, h * d}));
}

LinearAttentionImpl::LinearAttentionImpl(const LinearAttentionOptions& o) : m_options(o) {
  require(o.dim_head() >= 1, "model.linear_attn_dim_head", "must be >= 1");
  require(o.heads() >= 1, "model.linear_attn_heads", "must be >= 1");
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

torch::Tensor tokenShift(const torch::Tensor& x) {
  const auto halves = x.chunk(2, 1);
  const auto shifted = F::pad(halves[1], F::PadFuncOptions({0, 0, 0, 0, 1, -1}));
  return torch::cat({halves[0], shifted}, 1);
}

TimeAttentionBlockImpl::TimeAttentionBlockImpl(const AttentionOptions& attn_options,
                                               std::int64_t ff_mult) {
  require(attn_options.dim() % 2 == 0, "model.layers",
          "attend_time needs an even channel count (token shift)");
  attn = register_module("attn", Attention(AttentionOptions(attn_options).causal(true)));
  ff = register_module("ff", FeedForward(attn_options.dim(), ff_mult, attn_options.dim_cond()));
}

torch::Tensor TimeAttentionBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  const std::int64_t b = x.size(0), h = x.size(3), w = x.size(4);
  const auto seq = pixelsToBatch(tokenShift(x)).transpose(1, 2);  // [B*H*W, T, C]
  const auto upd = attn(seq, expandCond(cond, h * w));
  auto y = x + batchToPixels(upd.transpose(1, 2), b, h, w);
  y = y + ff(tokenShift(y), cond);
  return y;
}

}  // namespace tb::trainer
