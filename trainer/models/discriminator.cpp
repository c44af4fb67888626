// Frame, PatchGAN and video discriminators.
#include "trainer/models/discriminator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tb::trainer {
namespace F = torch::nn::functional;
namespace {

void require(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw std::invalid_argument(field + ": " + message);
}

torch::Tensor leaky(const torch::Tensor& x, double slope = 0.1) {
  return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(slope));
}

std::int64_t log2Exact(std::int64_t v) {
  std::int64_t n = 0;
  while ((std::int64_t{1} << (n + 1)) <= v) ++n;
  return n;
}

}  // namespace

FrameDiscriminatorBlockImpl::FrameDiscriminatorBlockImpl(std::int64_t in, std::int64_t out,
                                                         bool down) {
  conv_res = register_module(
      "conv_res", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(down ? 2 : 1)));
  conv1 =
      register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1)));
  conv2 =
      register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(out, out, 3).padding(1)));
  if (down)
    downsample =
        register_module("downsample", torch::nn::Conv2d(torch::nn::Conv2dOptions(out * 4, out, 1)));
}

torch::Tensor FrameDiscriminatorBlockImpl::forward(const torch::Tensor& x) {
  const auto res = conv_res(x);
  auto h = leaky(conv2(leaky(conv1(x))));
  if (downsample) {
    // 'b c (h p1) (w p2) -> b (c p1 p2) h w'
    h = downsample(F::pixel_unshuffle(h, 2));
  }
  return (h + res) * std::sqrt(0.5);
}

FrameDiscriminatorImpl::FrameDiscriminatorImpl(const FrameDiscriminatorOptions& o) : m_options(o) {
  require(o.dim() >= 1, "model.discriminator.dim", "must be >= 1");
  require(o.image_size() >= 8 && (o.image_size() & (o.image_size() - 1)) == 0, o.image_size_key(),
          "the frame discriminator needs a power of two >= 8");
  const std::int64_t num_layers = log2Exact(o.image_size()) - 2;
  std::vector<std::int64_t> dims{o.channels()};
  for (std::int64_t i = 0; i <= num_layers; ++i)
    dims.push_back(
        std::min(o.dim() * 4 * (std::int64_t{1} << std::min<std::int64_t>(i, 20)), o.max_dim()));
  blocks = register_module("blocks", torch::nn::ModuleList());
  std::int64_t res = o.image_size();
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) {
    const bool last = i + 2 == dims.size();
    blocks->push_back(FrameDiscriminatorBlock(dims[i], dims[i + 1], !last));
    SpaceAttentionBlock attn{nullptr};
    if (std::find(o.attn_resolutions().begin(), o.attn_resolutions().end(), res) !=
        o.attn_resolutions().end()) {
      attn = register_module("attn_blocks_" + std::to_string(i),
                             SpaceAttentionBlock(AttentionOptions(dims[i + 1]),
                                                 LinearAttentionOptions(dims[i + 1])
                                                     .dim_head(o.linear_attn_dim_head())
                                                     .heads(o.linear_attn_heads()),
                                                 true, o.ff_mult(), 0));
    }
    attn_blocks.push_back(attn);
    res /= 2;
  }
  const std::int64_t last = dims.back();
  const std::int64_t fmap = o.image_size() >> num_layers;
  to_logits_conv = register_module(
      "to_logits_conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(last, last, 3).padding(1)));
  to_logits = register_module("to_logits", torch::nn::Linear(fmap * fmap * last, 1));
}

torch::Tensor FrameDiscriminatorImpl::forward(const torch::Tensor& input) {
  TORCH_CHECK(input.dim() == 4 && input.size(2) == m_options.image_size(),
              "frame discriminator expects [B, C, ", m_options.image_size(), ", ",
              m_options.image_size(), "], got ", input.sizes());
  torch::Tensor x = input;
  for (std::size_t i = 0; i < blocks->size(); ++i) {
    const torch::Tensor in = x;
    auto block = [&] { return blocks->ptr<FrameDiscriminatorBlockImpl>(i)->forward(in); };
    x = m_runner ? m_runner("blocks." + std::to_string(i), block) : block();
    if (attn_blocks[i]) {
      const torch::Tensor a = x;
      auto attention = [&] { return attn_blocks[i]->forward(a, {}); };
      x = m_runner ? m_runner("attn_blocks_" + std::to_string(i), attention) : attention();
    }
  }
  x = leaky(to_logits_conv(x));
  return to_logits(x.flatten(1)).squeeze(-1);
}

std::vector<ModelLayer> FrameDiscriminatorImpl::layers() const {
  std::vector<ModelLayer> out;
  for (std::size_t i = 0; i < blocks->size(); ++i) {
    out.push_back({"blocks." + std::to_string(i), "discr_block", {blocks->ptr(i).get()}});
    if (attn_blocks[i])
      out.push_back(
          {"attn_blocks_" + std::to_string(i), "discr_attention", {attn_blocks[i].get()}});
  }
  return out;
}

PatchGanDiscriminatorImpl::PatchGanDiscriminatorImpl(std::int64_t channels, std::int64_t dim,
                                                     std::int64_t layers) {
  require(dim >= 1, "model.discriminator.dim", "must be >= 1");
  require(layers >= 1, "model.discriminator.patchgan_layers", "must be >= 1");
  using torch::nn::Conv2dOptions;
  main = register_module("main", torch::nn::Sequential());
  main->push_back(torch::nn::Conv2d(Conv2dOptions(channels, dim, 4).stride(2).padding(1)));
  main->push_back(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)));
  std::int64_t mult = 1;
  for (std::int64_t n = 1; n <= layers; ++n) {
    const std::int64_t prev = mult;
    mult = std::min<std::int64_t>(std::int64_t{1} << n, 8);
    const std::int64_t stride = n < layers ? 2 : 1;
    main->push_back(torch::nn::Conv2d(
        Conv2dOptions(dim * prev, dim * mult, 4).stride(stride).padding(1).bias(false)));
    main->push_back(torch::nn::BatchNorm2d(dim * mult));
    main->push_back(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)));
  }
  main->push_back(torch::nn::Conv2d(Conv2dOptions(dim * mult, 1, 4).stride(1).padding(1)));
  // taming's weights_init: conv N(0, 0.02), batch norm N(1, 0.02) with zero bias.
  torch::NoGradGuard no_grad;
  for (auto& m : main->modules(false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) c->weight.normal_(0.0, 0.02);
    if (auto* b = m->as<torch::nn::BatchNorm2d>()) {
      b->weight.normal_(1.0, 0.02);
      b->bias.zero_();
    }
  }
}

torch::Tensor PatchGanDiscriminatorImpl::forward(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4, "PatchGAN expects images [B, C, H, W], got ", x.sizes());
  return main->forward(x);
}

VideoDiscriminatorImpl::VideoDiscriminatorImpl(std::int64_t channels, std::int64_t dim,
                                               std::int64_t max_dim, std::int64_t image_size,
                                               const std::string& image_size_key) {
  require(dim >= 1, "model.discriminator.dim", "must be >= 1");
  require(image_size >= 8, image_size_key, "the video discriminator needs >= 8");
  const std::int64_t num_layers = log2Exact(image_size) - 2;
  blocks = register_module("blocks", torch::nn::ModuleList());
  std::int64_t in = channels;
  for (std::int64_t i = 0; i < num_layers; ++i) {
    const std::int64_t out =
        std::min(dim * (std::int64_t{2} << std::min<std::int64_t>(i, 20)), max_dim);
    auto block = torch::nn::Sequential();
    block->push_back(torch::nn::Conv3d(torch::nn::Conv3dOptions(in, out, 3).padding(1)));
    block->push_back(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.1)));
    block->push_back(torch::nn::Conv3d(torch::nn::Conv3dOptions(out, out, 3).padding(1)));
    block->push_back(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.1)));
    blocks->push_back(block);
    blocks->push_back(torch::nn::Conv3d(torch::nn::Conv3dOptions(in, out, 1)));  // shortcut
    in = out;
  }
  to_logits = register_module("to_logits", torch::nn::Conv3d(torch::nn::Conv3dOptions(in, 1, 1)));
}

torch::Tensor VideoDiscriminatorImpl::forward(const torch::Tensor& input) {
  TORCH_CHECK(input.dim() == 5, "video discriminator expects [B, C, T, H, W], got ", input.sizes());
  torch::Tensor x = input;
  for (std::size_t i = 0; i + 1 < blocks->size(); i += 2) {
    const torch::Tensor in = x;
    auto block = [&] {
      const auto h = blocks->ptr<torch::nn::SequentialImpl>(i)->forward(in);
      const auto res = blocks->ptr<torch::nn::Conv3dImpl>(i + 1)->forward(in);
      return (h + res) * std::sqrt(0.5);
    };
    x = m_runner ? m_runner("blocks." + std::to_string(i), block) : block();
    // Halve space, and time while more than one frame remains (average pooling, ceil mode).
    const std::int64_t kt = x.size(2) > 1 ? 2 : 1;
    x = F::avg_pool3d(x, F::AvgPool3dFuncOptions({kt, 2, 2}).ceil_mode(true));
  }
  return to_logits(x).mean({1, 2, 3, 4});
}

std::vector<ModelLayer> VideoDiscriminatorImpl::layers() const {
  std::vector<ModelLayer> out;
  for (std::size_t i = 0; i + 1 < blocks->size(); i += 2)
    out.push_back({"blocks." + std::to_string(i),
                   "discr_block",
                   {blocks->ptr(i).get(), blocks->ptr(i + 1).get()}});
  return out;
}

std::shared_ptr<Discriminator> makeDiscriminator(const core::ModelConfig& model,
                                                 const core::DataConfig& data) {
  const auto& d = model.discriminator;
  const std::int64_t dim =
      d.dim > 0 ? d.dim : (model.kind == core::ModelKind::Vqgan ? 64 : model.init_dim);
  // It judges what training reconstructs: the training crops when there are any.
  const bool crops = data.train_crop > 0;
  const std::int64_t size = crops ? data.train_crop : data.image_size;
  const std::string key = crops ? "data.train_crop" : "data.image_size";
  switch (d.type) {
    case core::DiscriminatorType::Frame:
      return FrameDiscriminator(FrameDiscriminatorOptions(dim, size)
                                    .image_size_key(key)
                                    .channels(model.channels)
                                    .max_dim(d.max_dim)
                                    .attn_resolutions(d.attn_resolutions)
                                    .linear_attn_dim_head(model.linear_attn_dim_head)
                                    .linear_attn_heads(model.linear_attn_heads)
                                    .ff_mult(model.ff_mult))
          .ptr();
    case core::DiscriminatorType::PatchGan:
      return PatchGanDiscriminator(model.channels, dim, d.patchgan_layers).ptr();
    case core::DiscriminatorType::Video:
      return VideoDiscriminator(model.channels, dim, d.max_dim, size, key).ptr();
  }
  throw std::invalid_argument("model.discriminator.type: no discriminator for this value");
}

}  // namespace tb::trainer
