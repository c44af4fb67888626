#pragma once
// MAGVIT-v2 causal video tokenizer built from the magvit2-pytorch layer vocabulary
// (VideoTokenizer at magvit2-pytorch a00519f, without its loss modules).

#include "core/run_config.h"
#include "trainer/models/causal_conv.h"
#include "trainer/models/magvit_blocks.h"
#include "trainer/models/pixel_range.h"
#include "trainer/models/tokenizer.h"

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tb::trainer {

/// One resolved entry of the layer list: what it is and its channels in and out (encoder view).
struct MagvitStage {
  std::string type;      ///< vocabulary name ("residual", "compress_space", ...)
  std::int64_t dim = 0;  ///< channels in
  std::int64_t dim_out = 0;
  std::int64_t repeat = 1;  ///< consecutive_residual count
};

/// MAGVIT-v2 tokenizer. Input `[B, C, T, H, W]` with T = 1 + k x 2^(compress_time layers) and H, W
/// multiples of 2^(compress_space layers); the encoder pads 2^n - 1 zero frames in front so the
/// first frame gets a latent frame of its own: 1 + 4k frames -> 1 + k latent frames with two
/// compress_time layers. Latent `[B, D, t, h, w]`, D = channels after the last layer. Frames in
/// and out are [-1, 1]; with model.pixel_range zero_one the layers see and give [0, 1]. The
/// encoder ends with encoder_norm (LayerNorm over channels) unless model.encoder_norm is false.
///
/// Parameter names: conv_in.conv.*, conv_in_first_frame.* (separate_first_frame_encoding),
/// encoder_layers.<i>.*, encoder_norm.*, quantizer.*, decoder_layers.<i>.* (decoder order: the
/// mirror of the encoder), conv_out.conv.*, conv_out_first_frame.*, encoder_cond_in.* and
/// decoder_cond_in.* (cond_* layers).
class MagvitTokenizerImpl : public Tokenizer {
 public:
  /// Throws std::invalid_argument naming the field ("model.layers[2]: ...").
  MagvitTokenizerImpl(const core::ModelConfig& config, std::int64_t image_size);

  torch::Tensor encode(const torch::Tensor& video, const torch::Tensor& cond = {}) override;
  torch::Tensor decode(const torch::Tensor& quantized, const torch::Tensor& cond = {}) override;
  std::shared_ptr<Quantizer> quantizer() const override { return m_quantizer; }
  torch::Tensor lastDecoderWeight() const override { return conv_out->conv->weight; }
  TokenizerStats stats(std::int64_t frames, std::int64_t image_size) const override;
  void setActivationCheckpointing(const std::vector<std::string>& layer_types) override;
  std::vector<ModelLayer> layers() const override;
  void setLayerRunner(const LayerRunner& runner) override;
  std::array<std::int64_t, 3> tokenGrid(std::int64_t frames,
                                        std::int64_t image_size) const override;

  /// Frame compression factor 2^(compress_time layers) and space factor 2^(compress_space layers).
  std::int64_t timeFactor() const override { return m_time_factor; }
  bool codesTimeInChunks() const override { return true; }
  std::int64_t spaceFactor() const { return m_space_factor; }
  std::int64_t latentDim() const { return m_latent_dim; }
  const std::vector<MagvitStage>& stages() const { return m_stages; }

  CausalConv3d conv_in{nullptr}, conv_out{nullptr};
  torch::nn::Conv2d conv_in_first_frame{nullptr}, conv_out_first_frame{nullptr};
  MagvitSequence encoder_layers{nullptr}, decoder_layers{nullptr};
  torch::nn::LayerNorm encoder_norm{nullptr};
  torch::nn::Linear encoder_cond_in{nullptr}, decoder_cond_in{nullptr};

 private:
  torch::Tensor condIn(torch::nn::Linear stem, const torch::Tensor& cond);

  core::ModelConfig m_config;
  std::vector<MagvitStage> m_stages;
  std::shared_ptr<Quantizer> m_quantizer;
  std::int64_t m_time_factor = 1, m_space_factor = 1, m_latent_dim = 0;
  TimePadding m_time_padding = TimePadding::Zeros;
  PixelRange m_pixel_range = PixelRange::MinusOneOne;
  bool m_has_cond = false;
};
TORCH_MODULE(MagvitTokenizer);

}  // namespace tb::trainer
