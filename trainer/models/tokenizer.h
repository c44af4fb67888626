#pragma once
// The one interface of every tokenizer (MAGVIT-v2, VQGAN), its static description (parameter
// counts, token grid, cost estimates) and the factory that builds one from the configuration.

#include "core/run_config.h"
#include "trainer/models/layer_runner.h"
#include "trainer/models/quantizer.h"

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tb::trainer {

/// What a full tokenizer pass returns.
struct TokenizerOutput {
  /// Reconstruction, same shape as the input `[B, C, T, H, W]` (or `[B, C, H, W]`), about [-1, 1].
  torch::Tensor recon;
  /// Token indices (int64), `[B, t, h, w]` (trailing codebook dimension when several).
  torch::Tensor indices;
  /// Every loss term by name, in a fixed order: "recon_l1", "recon_mse" (against the input),
  /// "quantizer" (the quantizer's weighted loss), then the quantizer's unweighted terms with the
  /// prefix "quantizer/" (e.g. "quantizer/commitment"). Scalars.
  LossTerms losses;
};

/// Static figures of a tokenizer for one clip shape (from layer shapes, without running it).
struct TokenizerStats {
  std::int64_t encoder_params = 0;
  std::int64_t decoder_params = 0;
  std::int64_t quantizer_params = 0;
  std::array<std::int64_t, 4> input_shape{};  ///< [C, T, H, W]
  std::array<std::int64_t, 3> token_grid{};   ///< [t, h, w]
  /// Forward FLOPs per clip: 2 x multiply-adds of every convolution, linear layer and attention
  /// matmul (encoder + quantizer projections + decoder); element-wise work is not counted.
  double forward_flops = 0;
  /// Activation elements per clip that a training step keeps for backward: the sum of the
  /// outputs of every convolution, linear layer, norm, activation and attention matrix.
  double activation_elements = 0;

  std::int64_t tokenizerParams() const {
    return encoder_params + decoder_params + quantizer_params;
  }
};

/// Base of every tokenizer. Videos are `[B, C, T, H, W]` in [-1, 1]; images `[B, C, H, W]` are
/// treated as 1-frame videos. `cond` is the conditioning vector `[B, dim_cond]` of cond_* layers
/// (undefined otherwise).
class Tokenizer : public torch::nn::Module {
 public:
  /// Video -> continuous latent `[B, D, t, h, w]` (before quantization).
  virtual torch::Tensor encode(const torch::Tensor& video, const torch::Tensor& cond = {}) = 0;
  /// Continuous latent -> quantized latent, indices and quantizer losses, in fp32 also under
  /// autocast (train.precision bf16, fp16): distances, entropies and codes never depend on how a
  /// value near a decision boundary was rounded.
  QuantizerOutput quantize(const torch::Tensor& latent);
  /// Quantized latent `[B, D, t, h, w]` -> video `[B, C, T, H, W]`.
  virtual torch::Tensor decode(const torch::Tensor& quantized, const torch::Tensor& cond = {}) = 0;
  /// Video -> indices `[B, t, h, w]`, without gradients.
  torch::Tensor tokenize(const torch::Tensor& video, const torch::Tensor& cond = {});
  /// Indices `[B, t, h, w]` -> video `[B, C, T, H, W]`.
  torch::Tensor decodeFromIndices(const torch::Tensor& indices, const torch::Tensor& cond = {});
  /// encode -> quantize -> decode, with every loss term (see TokenizerOutput).
  TokenizerOutput forward(const torch::Tensor& video, const torch::Tensor& cond = {});

  /// Frames per latent frame: 2^(compress_time layers) for MAGVIT-v2, 1 for VQGAN. A video of
  /// 1 + k x timeFactor() frames codes whole into 1 + k latent frames.
  virtual std::int64_t timeFactor() const { return 1; }
  /// Whether encode and decode give in consecutive time chunks (under a TimeStreamScope) what one
  /// pass gives: MAGVIT-v2 (causal, its layers carry their state) and VQGAN (frame by frame).
  virtual bool codesTimeInChunks() const { return false; }
  /// tokenize() of a whole video `[B, C, T, H, W]`, T = 1 + k x timeFactor(), `chunk` latent
  /// frames at a time (the first chunk 1 + (chunk - 1) x timeFactor() frames, the others
  /// chunk x timeFactor()), so memory follows the chunk, not the video. The same indices as one
  /// pass (up to float rounding in the layers). chunk <= 0, or a tokenizer that cannot chunk:
  /// one pass.
  torch::Tensor tokenizeVideo(const torch::Tensor& video, std::int64_t chunk);
  /// decodeFromIndices() of `[B, t, h, w]`, `chunk` latent frames at a time.
  torch::Tensor decodeVideo(const torch::Tensor& indices, std::int64_t chunk);

  virtual std::shared_ptr<Quantizer> quantizer() const = 0;
  /// The weight of the last decoder layer (VQGAN's adaptive GAN weight uses its gradients).
  virtual torch::Tensor lastDecoderWeight() const = 0;
  /// train.activation_checkpointing: the layers of these types (MAGVIT-v2 layer names, or "all")
  /// keep only their inputs for backward and recompute their activations there. The same
  /// gradients, less memory, one more forward of those layers. VQGAN ignores it.
  virtual void setActivationCheckpointing(const std::vector<std::string>& layer_types) {
    (void)layer_types;
  }
  /// The layers sharded training may gather one at a time (distributed.zero3_units): MAGVIT-v2's
  /// encoder and decoder layers. Empty for VQGAN, whose parameters form one unit.
  virtual std::vector<ModelLayer> layers() const { return {}; }
  /// Runs every layer of layers() through `runner` (empty: plain forward).
  virtual void setLayerRunner(const LayerRunner& runner) { (void)runner; }
  /// Figures for clips of `frames` x `image_size`^2.
  virtual TokenizerStats stats(std::int64_t frames, std::int64_t image_size) const = 0;
  /// Token grid [t, h, w] for clips of `frames` x `image_size`^2.
  virtual std::array<std::int64_t, 3> tokenGrid(std::int64_t frames,
                                                std::int64_t image_size) const = 0;
};

/// Builds the tokenizer of `model.kind` for `data.image_size` (and num_frames). Throws
/// std::invalid_argument naming the offending field ("model.layers[3]: ...").
std::shared_ptr<Tokenizer> makeTokenizer(const core::ModelConfig& model,
                                         const core::DataConfig& data);

/// Number of elements of all parameters of `module` (recursively).
std::int64_t countParameters(const torch::nn::Module& module);

}  // namespace tb::trainer
