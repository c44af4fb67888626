// taming-style VQGAN encoder/decoder and the per-frame VQGAN tokenizer.
#include "trainer/models/vqgan_tokenizer.h"

#include "trainer/models/video_layout.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tb::trainer {
namespace F = torch::nn::functional;
namespace {

void require(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw std::invalid_argument(field + ": " + message);
}

torch::nn::GroupNorm groupNorm(std::int64_t channels) {
  return torch::nn::GroupNorm(
      torch::nn::GroupNormOptions(std::gcd<std::int64_t>(32, channels), channels).eps(1e-6));
}

torch::nn::Conv2d conv(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride = 1) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(stride == 1 ? k / 2 : 0));
}

bool contains(const std::vector<int>& v, std::int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void validate(const core::VqganConfig& c, std::int64_t resolution) {
  require(c.base_channels >= 1, "model.vqgan.base_channels", "must be >= 1");
  require(!c.channel_mult.empty(), "model.vqgan.channel_mult", "must not be empty");
  for (std::size_t i = 0; i < c.channel_mult.size(); ++i)
    require(c.channel_mult[i] >= 1, "model.vqgan.channel_mult[" + std::to_string(i) + "]",
            "must be >= 1");
  require(c.num_res_blocks >= 1, "model.vqgan.num_res_blocks", "must be >= 1");
  require(c.z_channels >= 1, "model.vqgan.z_channels", "must be >= 1");
  require(c.resolution >= 0, "model.vqgan.resolution", "must be >= 0");
  const std::int64_t f = std::int64_t{1} << (c.channel_mult.size() - 1);
  require(
      resolution % f == 0, "data.image_size",
      "must be a multiple of " + std::to_string(f) + " (2^(len(model.vqgan.channel_mult) - 1))");
}

/// The side attn_resolutions count from: model.vqgan.resolution, else the images' own.
std::int64_t attentionSide(const core::VqganConfig& c, std::int64_t image_size) {
  return c.resolution > 0 ? c.resolution : image_size;
}

}  // namespace

VqganResBlockImpl::VqganResBlockImpl(std::int64_t in, std::int64_t out) {
  norm1 = register_module("norm1", groupNorm(in));
  conv1 = register_module("conv1", conv(in, out, 3));
  norm2 = register_module("norm2", groupNorm(out));
  conv2 = register_module("conv2", conv(out, out, 3));
  if (in != out) nin_shortcut = register_module("nin_shortcut", conv(in, out, 1));
}

torch::Tensor VqganResBlockImpl::forward(const torch::Tensor& x) {
  auto h = conv1(torch::silu(norm1(x)));
  h = conv2(torch::silu(norm2(h)));
  return (nin_shortcut ? nin_shortcut(x) : x) + h;
}

VqganAttnBlockImpl::VqganAttnBlockImpl(std::int64_t c) {
  norm = register_module("norm", groupNorm(c));
  q = register_module("q", conv(c, c, 1));
  k = register_module("k", conv(c, c, 1));
  v = register_module("v", conv(c, c, 1));
  proj_out = register_module("proj_out", conv(c, c, 1));
}

torch::Tensor VqganAttnBlockImpl::forward(const torch::Tensor& x) {
  const auto h = norm(x);
  const std::int64_t n = x.size(0), c = x.size(1), hw = x.size(2) * x.size(3);
  const auto qq = q(h).reshape({n, c, hw}).transpose(1, 2);  // [n, hw, c]
  const auto kk = k(h).reshape({n, c, hw});                  // [n, c, hw]
  const auto w = torch::softmax(torch::bmm(qq, kk) * (1.0 / std::sqrt(static_cast<double>(c))), -1);
  const auto vv = v(h).reshape({n, c, hw});
  const auto out = torch::bmm(vv, w.transpose(1, 2)).reshape(x.sizes());
  return x + proj_out(out);
}

VqganLevelImpl::VqganLevelImpl(std::int64_t in, std::int64_t out, std::int64_t blocks,
                               bool attention, int resample)
    : m_resample(resample) {
  block = register_module("block", torch::nn::ModuleList());
  attn = register_module("attn", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < blocks; ++i) {
    block->push_back(VqganResBlock(i == 0 ? in : out, out));
    if (attention) attn->push_back(VqganAttnBlock(out));
  }
  if (resample < 0) resample_conv = register_module("downsample", conv(out, out, 3, 2));
  if (resample > 0) resample_conv = register_module("upsample", conv(out, out, 3));
}

torch::Tensor VqganLevelImpl::forward(const torch::Tensor& input) {
  torch::Tensor x = input;
  for (std::size_t i = 0; i < block->size(); ++i) {
    x = block->ptr<VqganResBlockImpl>(i)->forward(x);
    if (attn->size() > 0) x = attn->ptr<VqganAttnBlockImpl>(i)->forward(x);
  }
  if (m_resample < 0) x = resample_conv(F::pad(x, F::PadFuncOptions({0, 1, 0, 1})));
  if (m_resample > 0)
    x = resample_conv(F::interpolate(x, F::InterpolateFuncOptions()
                                            .scale_factor(std::vector<double>{2.0, 2.0})
                                            .mode(torch::kNearest)));
  return x;
}

VqganEncoderImpl::VqganEncoderImpl(const core::VqganConfig& c, std::int64_t in_channels,
                                   std::int64_t resolution) {
  validate(c, resolution);
  const std::int64_t ch = c.base_channels;
  conv_in = register_module("conv_in", conv(in_channels, ch, 3));
  down = register_module("down", torch::nn::ModuleList());
  std::int64_t res = attentionSide(c, resolution), block_in = ch;
  for (std::size_t i = 0; i < c.channel_mult.size(); ++i) {
    const std::int64_t block_out = ch * c.channel_mult[i];
    const bool last = i + 1 == c.channel_mult.size();
    down->push_back(VqganLevel(block_in, block_out, c.num_res_blocks,
                               contains(c.attn_resolutions, res), last ? 0 : -1));
    block_in = block_out;
    if (!last) res /= 2;
  }
  mid_block_1 = register_module("mid_block_1", VqganResBlock(block_in, block_in));
  mid_attn_1 = register_module("mid_attn_1", VqganAttnBlock(block_in));
  mid_block_2 = register_module("mid_block_2", VqganResBlock(block_in, block_in));
  norm_out = register_module("norm_out", groupNorm(block_in));
  conv_out = register_module("conv_out", conv(block_in, c.z_channels, 3));
}

torch::Tensor VqganEncoderImpl::forward(const torch::Tensor& input) {
  auto x = conv_in(input);
  for (std::size_t i = 0; i < down->size(); ++i) x = down->ptr<VqganLevelImpl>(i)->forward(x);
  x = mid_block_2(mid_attn_1(mid_block_1(x)));
  return conv_out(torch::silu(norm_out(x)));
}

VqganDecoderImpl::VqganDecoderImpl(const core::VqganConfig& c, std::int64_t out_channels,
                                   std::int64_t resolution) {
  validate(c, resolution);
  const std::int64_t ch = c.base_channels,
                     levels = static_cast<std::int64_t>(c.channel_mult.size());
  std::int64_t block_in = ch * c.channel_mult.back();
  std::int64_t res = attentionSide(c, resolution) >> (levels - 1);
  conv_in = register_module("conv_in", conv(c.z_channels, block_in, 3));
  mid_block_1 = register_module("mid_block_1", VqganResBlock(block_in, block_in));
  mid_attn_1 = register_module("mid_attn_1", VqganAttnBlock(block_in));
  mid_block_2 = register_module("mid_block_2", VqganResBlock(block_in, block_in));
  up = register_module("up", torch::nn::ModuleList());
  for (std::int64_t i = levels - 1; i >= 0; --i) {
    const std::int64_t block_out = ch * c.channel_mult[static_cast<std::size_t>(i)];
    up->push_back(VqganLevel(block_in, block_out, c.num_res_blocks + 1,
                             contains(c.attn_resolutions, res), i == 0 ? 0 : 1));
    block_in = block_out;
    if (i != 0) res *= 2;
  }
  norm_out = register_module("norm_out", groupNorm(block_in));
  conv_out = register_module("conv_out", conv(block_in, out_channels, 3));
}

torch::Tensor VqganDecoderImpl::forward(const torch::Tensor& z) {
  auto x = mid_block_2(mid_attn_1(mid_block_1(conv_in(z))));
  for (std::size_t i = 0; i < up->size(); ++i) x = up->ptr<VqganLevelImpl>(i)->forward(x);
  return conv_out(torch::silu(norm_out(x)));
}

VqganTokenizerImpl::VqganTokenizerImpl(const core::ModelConfig& c, std::int64_t image_size)
    : m_config(c), m_pixel_range(c.pixel_range) {
  require(c.channels >= 1, "model.channels", "must be >= 1");
  const std::int64_t code_dim = c.quantizer.codebook_dim;
  require(code_dim >= 1, "model.quantizer.codebook_dim", "must be >= 1");
  encoder = register_module("encoder", VqganEncoder(c.vqgan, c.channels, image_size));
  quant_conv = register_module("quant_conv", conv(c.vqgan.z_channels, code_dim, 1));
  m_quantizer = register_module("quantizer", makeQuantizer(c.quantizer, code_dim));
  post_quant_conv = register_module("post_quant_conv", conv(code_dim, c.vqgan.z_channels, 1));
  decoder = register_module("decoder", VqganDecoder(c.vqgan, c.channels, image_size));
  m_factor = std::int64_t{1} << (c.vqgan.channel_mult.size() - 1);
}

torch::Tensor VqganTokenizerImpl::encode(const torch::Tensor& input,
                                         const torch::Tensor& /*cond*/) {
  const auto video = toPixelRange(input.dim() == 4 ? input.unsqueeze(2) : input, m_pixel_range);
  TORCH_CHECK(video.dim() == 5 && video.size(1) == m_config.channels, "expected [B, ",
              m_config.channels, ", T, H, W], got ", input.sizes());
  return batchToFrames(quant_conv(encoder(framesToBatch(video))), video.size(0));
}

torch::Tensor VqganTokenizerImpl::decode(const torch::Tensor& quantized,
                                         const torch::Tensor& /*cond*/) {
  TORCH_CHECK(quantized.dim() == 5, "expected latent [B, D, T, h, w], got ", quantized.sizes());
  return fromPixelRange(
      batchToFrames(decoder(post_quant_conv(framesToBatch(quantized))), quantized.size(0)),
      m_pixel_range);
}

std::array<std::int64_t, 3> VqganTokenizerImpl::tokenGrid(std::int64_t frames,
                                                          std::int64_t image_size) const {
  return {frames, image_size / m_factor, image_size / m_factor};
}

TokenizerStats VqganTokenizerImpl::stats(std::int64_t frames, std::int64_t image_size) const {
  TokenizerStats s;
  s.encoder_params = countParameters(*encoder) + countParameters(*quant_conv);
  s.decoder_params = countParameters(*decoder) + countParameters(*post_quant_conv);
  s.quantizer_params = countParameters(*m_quantizer);
  s.input_shape = {m_config.channels, frames, image_size, image_size};
  s.token_grid = tokenGrid(frames, image_size);
  // Convolutions: params x output positions (weights dominate); attention: 2 x c x (hw)^2.
  const auto& v = m_config.vqgan;
  double macs = 0, acts = 0;
  auto convCost = [&](const torch::nn::Module& m, double positions) {
    for (const auto& p : m.named_parameters(true)) {
      if (p.value().dim() == 4) macs += static_cast<double>(p.value().numel()) * positions;
      if (p.value().dim() == 4)
        acts += 3.0 * static_cast<double>(p.value().size(0)) * positions;  // conv + norm + act
    }
  };
  std::int64_t res = image_size;
  const double pix0 = static_cast<double>(image_size) * image_size;
  convCost(*encoder->conv_in, pix0);
  for (std::size_t i = 0; i < encoder->down->size(); ++i) {
    const double pix = static_cast<double>(res) * res;
    auto level = encoder->down->ptr<VqganLevelImpl>(i);
    convCost(*level->block, pix);
    convCost(*level->attn, pix);
    for (std::size_t a = 0; a < level->attn->size(); ++a) {
      const double c = static_cast<double>(v.base_channels * v.channel_mult[i]);
      macs += 2 * c * pix * pix;
      acts += 2 * pix * pix;
    }
    if (level->resample_conv) convCost(*level->resample_conv, pix / 4);
    if (i + 1 < encoder->down->size()) res /= 2;
  }
  const double low = static_cast<double>(res) * res;
  const double cmax = static_cast<double>(v.base_channels * v.channel_mult.back());
  convCost(*encoder->mid_block_1, low);
  convCost(*encoder->mid_attn_1, low);
  convCost(*encoder->mid_block_2, low);
  convCost(*encoder->conv_out, low);
  convCost(*quant_conv, low);
  convCost(*post_quant_conv, low);
  convCost(*decoder->conv_in, low);
  convCost(*decoder->mid_block_1, low);
  convCost(*decoder->mid_attn_1, low);
  convCost(*decoder->mid_block_2, low);
  macs += 4 * cmax * low * low;
  acts += 4 * low * low;
  for (std::size_t i = 0; i < decoder->up->size(); ++i) {
    const double pix = static_cast<double>(res) * res;
    auto level = decoder->up->ptr<VqganLevelImpl>(i);
    convCost(*level->block, pix);
    convCost(*level->attn, pix);
    const std::size_t mult_index = v.channel_mult.size() - 1 - i;
    for (std::size_t a = 0; a < level->attn->size(); ++a) {
      const double c = static_cast<double>(v.base_channels * v.channel_mult[mult_index]);
      macs += 2 * c * pix * pix;
      acts += 2 * pix * pix;
    }
    if (level->resample_conv) {
      res *= 2;
      convCost(*level->resample_conv, static_cast<double>(res) * res);
    }
  }
  convCost(*decoder->conv_out, pix0);
  s.forward_flops = 2 * macs * static_cast<double>(frames);
  s.activation_elements = acts * static_cast<double>(frames);
  return s;
}

}  // namespace tb::trainer
