// Causal 3-D convolutions (causal_conv.h).
#include "trainer/models/causal_conv.h"

#include "trainer/models/time_stream.h"

#include <string>

namespace tb::trainer {
namespace F = torch::nn::functional;

CausalConv3dImpl::CausalConv3dImpl(const CausalConv3dOptions& o) : m_options(o) {
  const auto& k = o.kernel();
  requireOption(o.in_channels() >= 1 && o.out_channels() >= 1, "channels", "must be >= 1");
  requireOption(k[0] >= 1 && k[1] % 2 == 1 && k[2] % 2 == 1, "kernel",
                "time kernel must be >= 1 and spatial kernels odd, got [" + std::to_string(k[0]) +
                    ", " + std::to_string(k[1]) + ", " + std::to_string(k[2]) + "]");
  requireOption(o.stride() >= 1 && o.dilation() >= 1, "stride", "stride and dilation must be >= 1");
  m_time_pad = o.dilation() * (k[0] - 1) + (1 - o.stride());
  requireOption(m_time_pad >= 0, "stride", "must not exceed the time kernel");
  conv = register_module(
      "conv", torch::nn::Conv3d(
                  torch::nn::Conv3dOptions(o.in_channels(), o.out_channels(), {k[0], k[1], k[2]})
                      .stride({o.stride(), 1, 1})
                      .dilation({o.dilation(), 1, 1})));
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

// In a TimeStream the time padding is the previous chunk's last frames (the first chunk's own).
torch::Tensor padCausalStreamed(const void* owner, const torch::Tensor& x, std::int64_t time_pad,
                                std::int64_t kh, std::int64_t kw, TimePadding mode) {
  TimeStream* stream = TimeStream::active();
  if (!stream) return padCausal(x, time_pad, kh, kw, mode);
  const auto timed = stream->withHistory(owner, x, 2, time_pad, [&](const torch::Tensor& v) {
    return padTimeFront(v, time_pad, mode);
  });
  return padCausal(timed, 0, kh, kw, mode);
}

torch::Tensor CausalConv3dImpl::forward(const torch::Tensor& x) {
  const auto& k = m_options.kernel();
  TORCH_CHECK(m_options.stride() == 1 || !TimeStream::active(),
              "a strided causal convolution cannot run in time chunks");
  return conv(padCausalStreamed(this, x, m_time_pad, k[1], k[2], m_options.time_padding()));
}

Conv3dModImpl::Conv3dModImpl(std::int64_t dim, std::int64_t dim_out, std::int64_t spatial_kernel,
                             std::int64_t time_kernel, bool demod, TimePadding time_padding)
    : m_spatial_kernel(spatial_kernel),
      m_time_kernel(time_kernel),
      m_demod(demod),
      m_time_padding(time_padding) {
  requireOption(spatial_kernel % 2 == 1 && time_kernel % 2 == 1, "residual_conv_kernel",
                "must be odd");
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
  auto fmap = padCausalStreamed(this, x, m_time_kernel - 1, m_spatial_kernel, m_spatial_kernel,
                                m_time_padding);
  fmap = fmap.reshape({1, b * x.size(1), fmap.size(2), fmap.size(3), fmap.size(4)});
  auto out = F::conv3d(fmap, w.flatten(0, 1), F::Conv3dFuncOptions().groups(b));
  return out.reshape({b, -1, out.size(2), out.size(3), out.size(4)});
}

}  // namespace tb::trainer
