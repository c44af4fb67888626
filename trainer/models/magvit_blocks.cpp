// Norms, residual units, samplers and the layer sequence of MAGVIT-v2 (magvit_blocks.h).
#include "trainer/models/magvit_blocks.h"

#include "trainer/models/time_stream.h"

#include "trainer/models/activation_checkpoint.h"
#include "trainer/models/video_layout.h"
#include "trainer/torch_compat.h"

#include <cmath>
#include <string>

namespace tb::trainer {
namespace F = torch::nn::functional;
namespace {

// Residual units run their ELUs in place on the convolutions' outputs, which no backward needs:
// autograd keeps the ELU's result (which the next layer keeps anyway) instead of a second copy,
// two of the five activations a unit kept (README configuration's generator step: README
// Performance).
torch::Tensor eluInPlace(const torch::Tensor& x) {
  return F::elu(x, F::ELUFuncOptions().inplace(true));
}

}  // namespace

// ---- norms ---------------------------------------------------------------------------------

RMSNormImpl::RMSNormImpl(std::int64_t dim, bool channel_first)
    : m_channel_first(channel_first), m_scale(std::sqrt(static_cast<double>(dim))) {
  gamma =
      register_parameter("gamma", channel_first ? torch::ones({dim, 1, 1, 1}) : torch::ones({dim}));
}

// Norms in fp32 under autocast (train.precision bf16, fp16).
torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  const auto n =
      F::normalize(compat::inFp32(x), F::NormalizeFuncOptions().dim(m_channel_first ? 1 : -1));
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
  return F::normalize(compat::inFp32(x), F::NormalizeFuncOptions().dim(m_channel_first ? 1 : -1)) *
         m_scale * gamma;
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
  requireOption(dim_cond > 0, "model.dim_cond", "cond_residual needs dim_cond > 0");
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
  // In a TimeStream the loop goes on from the state the previous chunk ended with.
  TimeStream* stream = TimeStream::active();
  torch::Tensor state = stream && stream->state(this).defined()
                            ? stream->state(this)
                            : torch::zeros_like(qkva[1].select(1, 0));
  for (std::int64_t i = 0; i < t; ++i) {
    state = a.select(1, i) * state + qkva[1].select(1, i);
    states.push_back(state);
  }
  if (stream) stream->state(this) = state;
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
                                           TimePadding time_padding, bool blocks)
    : m_time_padding(time_padding), m_front(blocks ? 1 : 2) {
  conv = register_module("conv",
                         torch::nn::Conv1d(torch::nn::Conv1dOptions(dim, dim_out, 3).stride(2)));
}
torch::Tensor TimeDownsample2xImpl::forward(const torch::Tensor& x, const torch::Tensor& /*cond*/) {
  // Lagged: two frames in front (zeros, as magvit2-pytorch, or copies): output i sees inputs
  // 2i-2 .. 2i only, so the decoder's frames 2i, 2i+1 (from output i) never see a later input
  // frame. Blocks: one in front, output i sees inputs 2i-1 .. 2i+1, both of its own.
  const auto frames = pixelsToBatch(x);
  const auto pad = [&](const torch::Tensor& v) { return padTimeFront(v, m_front, m_time_padding); };
  TimeStream* stream = TimeStream::active();
  const auto seq = stream ? stream->withHistory(this, frames, 2, m_front, pad) : pad(frames);
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

}  // namespace tb::trainer
