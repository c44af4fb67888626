// The MAGVIT-v2 tokenizer: its layer stacks, quantizer and static figures (magvit_tokenizer.h).
#include "trainer/models/magvit_tokenizer.h"

#include "trainer/models/magvit_attention.h"
#include "trainer/models/time_stream.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tb::trainer {
namespace F = torch::nn::functional;
namespace {

bool isCond(const std::string& type) { return type.rfind("cond_", 0) == 0; }

// Analytic cost of one stage: multiply-adds and kept activation elements per clip.
struct Cost {
  double macs = 0;
  double acts = 0;
};

struct Shape {
  double t, h, w;
  double positions() const { return t * h * w; }
};

Cost residualCost(double dim, double k, double p) {
  return {dim * dim * k * k * k * p + dim * dim * p + 2 * dim * p, 7 * dim * p};
}

Cost feedForwardCost(double dim, double mult, double p) {
  const double inner = std::floor(dim * mult * 2.0 / 3.0);
  return {dim * 2 * inner * p + inner * dim * p, 2 * dim * p + 4 * inner * p};
}

Cost attentionCost(double dim, double dh, double heads, double mem, double seq, double count) {
  const double inner = dh * heads, p = seq * count;
  Cost c;
  c.macs = 3 * inner * dim * p + 2 * heads * dh * seq * (seq + mem) * count + inner * dim * p;
  c.acts = dim * p + 3 * inner * p + 2 * heads * seq * (seq + mem) * count + inner * p + dim * p;
  return c;
}

Cost linearAttentionCost(double dim, double dh, double heads, double p) {
  const double inner = dh * heads, feat = 1 + dh + dh * dh;
  Cost c;
  c.macs = 3 * inner * dim * p + 2 * heads * feat * dh * p + heads * feat * p + inner * dim * p;
  c.acts = dim * p + 3 * inner * p + 2 * heads * feat * p + inner * p + dim * p;
  return c;
}

Cost operator+(Cost a, const Cost& b) { return {a.macs + b.macs, a.acts + b.acts}; }

}  // namespace

// ---- MAGVIT-v2 ----------------------------------------------------------------------------

MagvitTokenizerImpl::MagvitTokenizerImpl(const core::ModelConfig& c, std::int64_t image_size)
    : m_config(c), m_time_padding(c.time_padding), m_pixel_range(c.pixel_range) {
  requireOption(c.channels >= 1, "model.channels", "must be >= 1");
  requireOption(c.init_dim >= 1, "model.init_dim", "must be >= 1");
  requireOption(c.max_dim >= 1, "model.max_dim", "must be >= 1");
  requireOption(c.input_conv_kernel.size() == 3, "model.input_conv_kernel",
                "needs 3 entries [t, h, w]");
  requireOption(c.output_conv_kernel.size() == 3, "model.output_conv_kernel",
                "needs 3 entries [t, h, w]");
  requireOption(c.input_conv_kernel[1] % 2 == 1 && c.input_conv_kernel[2] % 2 == 1,
                "model.input_conv_kernel", "spatial kernels must be odd");
  requireOption(c.output_conv_kernel[1] % 2 == 1 && c.output_conv_kernel[2] % 2 == 1,
                "model.output_conv_kernel", "spatial kernels must be odd");
  requireOption(c.residual_conv_kernel % 2 == 1, "model.residual_conv_kernel", "must be odd");
  const std::int64_t k = c.residual_conv_kernel;
  const std::int64_t cond_dim =
      c.dim_cond * 4;  // conditioning MLP stem expands 4x (dim_cond_expansion_factor)

  auto kin = c.input_conv_kernel, kout = c.output_conv_kernel;
  const TimePadding tp = m_time_padding;
  const bool time_blocks = c.time_alignment == core::TimeAlignment::Blocks;
  conv_in = register_module(
      "conv_in",
      CausalConv3d(
          CausalConv3dOptions(c.channels, c.init_dim, {kin[0], kin[1], kin[2]}).time_padding(tp)));
  if (c.separate_first_frame_encoding) {
    conv_in_first_frame = register_module(
        "conv_in_first_frame",
        torch::nn::Conv2d(torch::nn::Conv2dOptions(c.channels, c.init_dim, {kin[1], kin[2]})
                              .padding({kin[1] / 2, kin[2] / 2})));
    conv_out_first_frame = register_module(
        "conv_out_first_frame",
        torch::nn::Conv2d(torch::nn::Conv2dOptions(c.init_dim, c.channels, {kout[1], kout[2]})
                              .padding({kout[1] / 2, kout[2] / 2})));
  }

  encoder_layers = register_module("encoder_layers", MagvitSequence());
  std::vector<std::shared_ptr<MagvitLayer>> decoder_reversed;
  std::int64_t dim = c.init_dim;
  std::int64_t fmap = image_size;
  for (std::size_t i = 0; i < c.layers.size(); ++i) {
    const auto& spec = c.layers[i];
    const std::string field = "model.layers[" + std::to_string(i) + "]";
    MagvitStage stage{spec.name, dim, dim, 1};
    if (isCond(spec.name)) {
      requireOption(c.dim_cond > 0, field, spec.name + " needs model.dim_cond > 0");
      m_has_cond = true;
    }
    AttentionOptions attn = AttentionOptions(dim)
                                .dim_head(c.attn_dim_head)
                                .heads(c.attn_heads)
                                .num_mem_kv(c.attn_num_mem_kv);
    LinearAttentionOptions lin =
        LinearAttentionOptions(dim).dim_head(c.linear_attn_dim_head).heads(c.linear_attn_heads);
    std::shared_ptr<MagvitLayer> enc, dec;
    try {
      if (spec.name == "residual") {
        enc = ResidualUnit(dim, k, tp, c.residual_gate_bias).ptr();
        dec = ResidualUnit(dim, k, tp, c.residual_gate_bias).ptr();
      } else if (spec.name == "consecutive_residual") {
        requireOption(spec.arg.has_value() && *spec.arg >= 1, field,
                      "consecutive_residual needs a count >= 1");
        stage.repeat = *spec.arg;
        auto e = MagvitSequence(), d = MagvitSequence();
        for (int r = 0; r < *spec.arg; ++r) {
          e->append(ResidualUnit(dim, k, tp, c.residual_gate_bias).ptr());
          d->append(ResidualUnit(dim, k, tp, c.residual_gate_bias).ptr());
        }
        enc = e.ptr();
        dec = d.ptr();
      } else if (spec.name == "cond_residual") {
        enc = ResidualUnitMod(dim, k, cond_dim, tp).ptr();
        dec = ResidualUnitMod(dim, k, cond_dim, tp).ptr();
      } else if (spec.name == "compress_space" || spec.name == "compress_time") {
        std::int64_t out = spec.arg.has_value() ? *spec.arg : dim * 2;
        out = std::min<std::int64_t>(out, c.max_dim);
        requireOption(out >= 1, field, "dim_out must be >= 1");
        stage.dim_out = out;
        if (spec.name == "compress_space") {
          requireOption(fmap > 1 && fmap % 2 == 0, field,
                        "compress_space needs an even feature map, got " + std::to_string(fmap) +
                            " (data.image_size " + std::to_string(image_size) + ")");
          fmap /= 2;
          m_space_factor *= 2;
          enc = SpatialDownsample2x(dim, out).ptr();
          dec = SpatialUpsample2x(out, dim).ptr();
        } else {
          m_time_factor *= 2;
          enc = TimeDownsample2x(dim, out, tp, time_blocks).ptr();
          dec = TimeUpsample2x(out, dim).ptr();
        }
      } else if (spec.name == "attend_space" || spec.name == "cond_attend_space") {
        if (isCond(spec.name)) attn.dim_cond(cond_dim);
        enc = SpaceAttentionBlock(attn, lin, false, c.ff_mult, 0).ptr();
        dec = SpaceAttentionBlock(attn, lin, false, c.ff_mult, 0).ptr();
      } else if (spec.name == "linear_attend_space" || spec.name == "cond_linear_attend_space") {
        const std::int64_t ffc = isCond(spec.name) ? cond_dim : 0;
        lin.dim_cond(ffc);
        enc = SpaceAttentionBlock(attn, lin, true, c.ff_mult, ffc).ptr();
        dec = SpaceAttentionBlock(attn, lin, true, c.ff_mult, ffc).ptr();
      } else if (spec.name == "attend_time" || spec.name == "cond_attend_time") {
        if (isCond(spec.name)) attn.dim_cond(cond_dim);
        enc = TimeAttentionBlock(attn, c.ff_mult).ptr();
        dec = TimeAttentionBlock(attn, c.ff_mult).ptr();
      } else if (spec.name == "gateloop_time") {
        enc = GateLoopTime(dim).ptr();
        dec = GateLoopTime(dim).ptr();
      } else {
        throw std::invalid_argument("unknown layer type \"" + spec.name + "\"");
      }
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      throw std::invalid_argument(what.rfind("model.", 0) == 0 ? what : field + ": " + what);
    }
    encoder_layers->append(enc);
    decoder_reversed.push_back(dec);
    m_stages.push_back(stage);
    dim = stage.dim_out;
  }
  m_latent_dim = dim;
  encoder_norm =
      register_module("encoder_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  if (m_has_cond) {
    encoder_cond_in = register_module("encoder_cond_in", torch::nn::Linear(c.dim_cond, cond_dim));
    decoder_cond_in = register_module("decoder_cond_in", torch::nn::Linear(c.dim_cond, cond_dim));
  }
  m_quantizer = register_module("quantizer", makeQuantizer(c.quantizer, dim));
  decoder_layers = register_module("decoder_layers", MagvitSequence());
  for (auto it = decoder_reversed.rbegin(); it != decoder_reversed.rend(); ++it)
    decoder_layers->append(*it);
  conv_out = register_module(
      "conv_out",
      CausalConv3d(CausalConv3dOptions(c.init_dim, c.channels, {kout[0], kout[1], kout[2]})
                       .time_padding(tp)));
}

torch::Tensor MagvitTokenizerImpl::condIn(torch::nn::Linear stem, const torch::Tensor& cond) {
  if (!m_has_cond) return {};
  TORCH_CHECK(cond.defined() && cond.dim() == 2 && cond.size(1) == m_config.dim_cond,
              "this tokenizer has cond_* layers: pass cond [B, ", m_config.dim_cond, "]");
  return torch::silu(stem->forward(cond));
}

torch::Tensor MagvitTokenizerImpl::encode(const torch::Tensor& input, const torch::Tensor& cond) {
  const auto video = toPixelRange(input.dim() == 4 ? input.unsqueeze(2) : input, m_pixel_range);
  TORCH_CHECK(video.dim() == 5 && video.size(1) == m_config.channels, "expected [B, ",
              m_config.channels, ", T, H, W], got ", input.sizes());
  TORCH_CHECK(TimeStream::active() || (video.size(2) - 1) % m_time_factor == 0,
              "frames - 1 must be divisible by ", m_time_factor, ", got ", video.size(2),
              " frames");
  TORCH_CHECK(video.size(3) % m_space_factor == 0 && video.size(4) % m_space_factor == 0,
              "height and width must be multiples of ", m_space_factor);
  const std::int64_t pad = m_time_factor - 1;
  const auto c = condIn(encoder_cond_in, cond);
  // In a TimeStream only the first chunk starts the video (1 + k x time factor frames); the
  // others continue it (k x time factor frames each).
  TimeStream* stream = TimeStream::active();
  const bool starts = !stream || stream->firstChunk(encoder_layers.get());
  TORCH_CHECK(
      starts ? (video.size(2) - 1) % m_time_factor == 0 : video.size(2) % m_time_factor == 0,
      "a continuing chunk must have a multiple of ", m_time_factor, " frames, got ", video.size(2));
  torch::Tensor x;
  if (!starts) {
    x = conv_in(video);
  } else if (conv_in_first_frame) {
    auto first = conv_in_first_frame(video.select(2, 0)).unsqueeze(2);
    x = video.size(2) > 1 ? torch::cat({first, conv_in(video.slice(2, 1))}, 2) : first;
    x = padTimeFront(x, pad, m_time_padding);
  } else {
    x = conv_in(padTimeFront(video, pad, m_time_padding));
  }
  x = encoder_layers(x, c);
  if (!m_config.encoder_norm) return x;
  // In the weights' dtype: CPU autocast (LibTorch 1.13) leaves layer_norm to the input's dtype
  // and fails on a bf16 input with float weights; CUDA autocast runs it in float anyway.
  return encoder_norm(x.movedim(1, -1).to(encoder_norm->weight.scalar_type())).movedim(-1, 1);
}

torch::Tensor MagvitTokenizerImpl::decode(const torch::Tensor& quantized,
                                          const torch::Tensor& cond) {
  TORCH_CHECK(quantized.dim() == 5 && quantized.size(1) == m_latent_dim, "expected latent [B, ",
              m_latent_dim, ", t, h, w], got ", quantized.sizes());
  const std::int64_t pad = m_time_factor - 1;
  auto x = decoder_layers(quantized, condIn(decoder_cond_in, cond));
  // In a TimeStream only the first chunk drops the padding frames and has a first frame.
  if (TimeStream* stream = TimeStream::active();
      stream && !stream->firstChunk(decoder_layers.get()))
    return fromPixelRange(conv_out(x), m_pixel_range);
  if (conv_out_first_frame) {
    auto first = conv_out_first_frame(x.select(2, pad)).unsqueeze(2);
    if (x.size(2) > pad + 1) first = torch::cat({first, conv_out(x.slice(2, pad + 1))}, 2);
    return fromPixelRange(first, m_pixel_range);
  }
  return fromPixelRange(conv_out(x).slice(2, pad), m_pixel_range);
}

void MagvitTokenizerImpl::setActivationCheckpointing(const std::vector<std::string>& layer_types) {
  auto chosen = [&](const std::string& type) {
    return std::find(layer_types.begin(), layer_types.end(), "all") != layer_types.end() ||
           std::find(layer_types.begin(), layer_types.end(), type) != layer_types.end();
  };
  // Encoder layer i and decoder layer n - 1 - i belong to stage i.
  const std::size_t n = m_stages.size();
  for (std::size_t i = 0; i < n; ++i) {
    const bool on = chosen(m_stages[i].type);
    encoder_layers->setCheckpointed(i, on);
    decoder_layers->setCheckpointed(n - 1 - i, on);
  }
}

std::vector<ModelLayer> MagvitTokenizerImpl::layers() const {
  std::vector<ModelLayer> out;
  const std::size_t n = m_stages.size();
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(
        {"encoder_layers." + std::to_string(i), m_stages[i].type, {encoder_layers->at(i).get()}});
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back({"decoder_layers." + std::to_string(i),
                   m_stages[n - 1 - i].type,
                   {decoder_layers->at(i).get()}});
  }
  return out;
}

void MagvitTokenizerImpl::setLayerRunner(const LayerRunner& runner) {
  encoder_layers->setRunner(runner, "encoder_layers");
  decoder_layers->setRunner(runner, "decoder_layers");
}

std::array<std::int64_t, 3> MagvitTokenizerImpl::tokenGrid(std::int64_t frames,
                                                           std::int64_t image_size) const {
  return {(frames + m_time_factor - 1) / m_time_factor, image_size / m_space_factor,
          image_size / m_space_factor};
}

TokenizerStats MagvitTokenizerImpl::stats(std::int64_t frames, std::int64_t image_size) const {
  TokenizerStats s;
  s.encoder_params =
      countParameters(*conv_in) + countParameters(*encoder_layers) + countParameters(*encoder_norm);
  if (conv_in_first_frame) s.encoder_params += countParameters(*conv_in_first_frame);
  if (encoder_cond_in) s.encoder_params += countParameters(*encoder_cond_in);
  s.decoder_params = countParameters(*conv_out) + countParameters(*decoder_layers);
  if (conv_out_first_frame) s.decoder_params += countParameters(*conv_out_first_frame);
  if (decoder_cond_in) s.decoder_params += countParameters(*decoder_cond_in);
  s.quantizer_params = countParameters(*m_quantizer);
  s.input_shape = {m_config.channels, frames, image_size, image_size};
  s.token_grid = tokenGrid(frames, image_size);

  const auto& c = m_config;
  const double kin = c.input_conv_kernel[0] * c.input_conv_kernel[1] * c.input_conv_kernel[2];
  const double kout = c.output_conv_kernel[0] * c.output_conv_kernel[1] * c.output_conv_kernel[2];
  Shape shape{static_cast<double>(frames + m_time_factor - 1), static_cast<double>(image_size),
              static_cast<double>(image_size)};
  Cost total;
  const double ch = c.channels, init = c.init_dim;
  total = total +
          Cost{ch * init * kin * shape.positions(), (ch + init) * shape.positions()};  // conv_in
  total = total +
          Cost{init * ch * kout * shape.positions(), (ch + init) * shape.positions()};  // conv_out
  const double rk = c.residual_conv_kernel;
  for (const auto& st : m_stages) {
    const double d = st.dim, dout = st.dim_out, p = shape.positions();
    Cost enc, dec;
    if (st.type == "residual" || st.type == "cond_residual") {
      enc = dec = residualCost(d, rk, p);
    } else if (st.type == "consecutive_residual") {
      const auto one = residualCost(d, rk, p);
      enc = dec = Cost{one.macs * st.repeat, one.acts * st.repeat};
    } else if (st.type == "compress_space") {
      const double po = p / 4;
      enc = {d * dout * 9 * po, d * p + dout * po};
      dec = {dout * 4 * d * po, 2 * 4 * d * po + d * p};
      shape.h /= 2;
      shape.w /= 2;
    } else if (st.type == "compress_time") {
      const double po = std::ceil(shape.t / 2) * shape.h * shape.w;
      enc = {d * dout * 3 * po, d * p + dout * po};
      dec = {dout * 2 * d * po, 2 * 2 * d * po + d * p};
      shape.t = std::ceil(shape.t / 2);
    } else if (st.type == "attend_space" || st.type == "cond_attend_space") {
      enc = dec = attentionCost(d, c.attn_dim_head, c.attn_heads, c.attn_num_mem_kv,
                                shape.h * shape.w, shape.t) +
                  feedForwardCost(d, c.ff_mult, p);
    } else if (st.type == "linear_attend_space" || st.type == "cond_linear_attend_space") {
      enc = dec = linearAttentionCost(d, c.linear_attn_dim_head, c.linear_attn_heads, p) +
                  feedForwardCost(d, c.ff_mult, p);
    } else if (st.type == "attend_time" || st.type == "cond_attend_time") {
      enc = dec = attentionCost(d, c.attn_dim_head, c.attn_heads, c.attn_num_mem_kv, shape.t,
                                shape.h * shape.w) +
                  feedForwardCost(d, c.ff_mult, p) + Cost{0, 2 * d * p};
    } else if (st.type == "gateloop_time") {
      enc = dec = Cost{3 * d * d * p, 8 * d * p};
    }
    total = total + enc + dec;
  }
  const double tokens = shape.positions();
  const double bits = m_quantizer->bitsPerToken();
  total = total + Cost{2 * m_latent_dim * bits * tokens, (3 * m_latent_dim + 4 * bits) * tokens};
  s.forward_flops = 2 * total.macs;
  s.activation_elements = total.acts;
  return s;
}

}  // namespace tb::trainer
