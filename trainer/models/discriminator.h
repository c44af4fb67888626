#pragma once
// GAN discriminators: MAGVIT-v2's frame discriminator, taming's PatchGAN and a 3-D video
// discriminator, behind one interface, and their factory.

#include "core/run_config.h"
#include "trainer/models/layer_runner.h"
#include "trainer/models/magvit_attention.h"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace tb::trainer {

/// Base of every discriminator. Inputs in [-1, 1].
class Discriminator : public torch::nn::Module {
 public:
  /// Frame / PatchGAN: images `[B, C, H, W]` (one frame per clip, chosen by the training loop);
  /// video: clips `[B, C, T, H, W]`. Returns real/fake logits: `[B]` (frame, video) or
  /// `[B, 1, h, w]` (PatchGAN's patch map).
  virtual torch::Tensor forward(const torch::Tensor& x) = 0;
  /// Whether forward() takes whole clips rather than frames.
  virtual bool takesVideo() const { return false; }
  /// The layers sharded training may gather one at a time (distributed.zero3_units): the blocks
  /// ("discr_block") and attention blocks ("discr_attention"). Empty for PatchGAN, whose
  /// parameters form one unit.
  virtual std::vector<ModelLayer> layers() const { return {}; }
  /// Runs every layer of layers() through `runner` (empty: plain forward).
  void setLayerRunner(const LayerRunner& runner) { m_runner = runner; }

 protected:
  LayerRunner m_runner;
};

/// Residual down-sampling block of the frame discriminator: conv3x3 -> LeakyReLU(0.1) ->
/// conv3x3 -> LeakyReLU, then space-to-depth + 1x1 conv (when downsampling); plus a strided 1x1
/// shortcut; sum scaled by 1/sqrt 2. `[N, Cin, H, W] -> [N, Cout, H/2, W/2]` (or same size).
class FrameDiscriminatorBlockImpl : public torch::nn::Module {
 public:
  FrameDiscriminatorBlockImpl(std::int64_t in_channels, std::int64_t out_channels, bool downsample);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv2d conv_res{nullptr}, conv1{nullptr}, conv2{nullptr}, downsample{nullptr};
};
TORCH_MODULE(FrameDiscriminatorBlock);

struct FrameDiscriminatorOptions {
  FrameDiscriminatorOptions(std::int64_t dim, std::int64_t image_size)
      : dim_(dim), image_size_(image_size) {}
  /// Channels are min(dim x 4 x 2^i, max_dim) for block i (as magvit2-pytorch).
  TORCH_ARG(std::int64_t, dim);
  TORCH_ARG(std::int64_t, image_size);
  /// The configuration key image_size comes from, for errors.
  TORCH_ARG(std::string, image_size_key) = "data.image_size";
  TORCH_ARG(std::int64_t, channels) = 3;
  TORCH_ARG(std::int64_t, max_dim) = 512;
  /// Input sides of the blocks followed by linear attention + feed-forward (magvit2-pytorch puts
  /// one after every block: pass every side to match it).
  TORCH_ARG(std::vector<int>, attn_resolutions) = std::vector<int>{16};
  TORCH_ARG(std::int64_t, linear_attn_dim_head) = 8;
  TORCH_ARG(std::int64_t, linear_attn_heads) = 16;
  TORCH_ARG(std::int64_t, ff_mult) = 4;
};

/// MAGVIT-v2 frame discriminator: log2(image_size) - 1 blocks (all but the last halve the side),
/// then conv3x3 -> LeakyReLU -> linear to one logit. `[B, C, S, S] -> [B]`.
class FrameDiscriminatorImpl : public Discriminator {
 public:
  explicit FrameDiscriminatorImpl(const FrameDiscriminatorOptions& options);
  torch::Tensor forward(const torch::Tensor& x) override;
  std::vector<ModelLayer> layers() const override;
  torch::nn::ModuleList blocks{nullptr};
  std::vector<SpaceAttentionBlock> attn_blocks;  ///< empty holders where no attention
  torch::nn::Conv2d to_logits_conv{nullptr};
  torch::nn::Linear to_logits{nullptr};

 private:
  FrameDiscriminatorOptions m_options;
};
TORCH_MODULE(FrameDiscriminator);

/// taming's NLayerDiscriminator (PatchGAN): conv4x4 s2 -> LeakyReLU(0.2), then layers-1 x
/// (conv4x4 s2 -> BatchNorm -> LeakyReLU) with channels dim x min(2^n, 8), one stride-1 layer,
/// conv4x4 to 1 channel. `[B, C, H, W] -> [B, 1, h, w]` patch logits.
class PatchGanDiscriminatorImpl : public Discriminator {
 public:
  PatchGanDiscriminatorImpl(std::int64_t channels, std::int64_t dim, std::int64_t layers);
  torch::Tensor forward(const torch::Tensor& x) override;
  torch::nn::Sequential main{nullptr};
};
TORCH_MODULE(PatchGanDiscriminator);

/// 3-D video discriminator: residual blocks of 3x3x3 convolutions that halve space (and time
/// while T > 1), channels min(dim x 2^(i+1), max_dim), then a 1x1x1 conv to logits averaged over
/// positions. `[B, C, T, S, S] -> [B]`. Not causal (it judges whole clips).
class VideoDiscriminatorImpl : public Discriminator {
 public:
  VideoDiscriminatorImpl(std::int64_t channels, std::int64_t dim, std::int64_t max_dim,
                         std::int64_t image_size,
                         const std::string& image_size_key = "data.image_size");
  torch::Tensor forward(const torch::Tensor& x) override;
  bool takesVideo() const override { return true; }
  /// Block i is "blocks.<2i>" (the residual branch) with its shortcut "blocks.<2i+1>".
  std::vector<ModelLayer> layers() const override;
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::Conv3d to_logits{nullptr};
};
TORCH_MODULE(VideoDiscriminator);

/// Builds `model.discriminator.type` for the frames training reconstructs: `data.train_crop`
/// squares when set, else `data.image_size`; dim 0 means model.init_dim (vqgan: 64). Throws
/// std::invalid_argument naming the field.
std::shared_ptr<Discriminator> makeDiscriminator(const core::ModelConfig& model,
                                                 const core::DataConfig& data);

}  // namespace tb::trainer
