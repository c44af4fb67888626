#pragma once
// The classic reference codec: vector quantisation of pixel blocks, no neural network. Each token
// of a tokenizer's grid stands for a block of pixels (space_factor^2 pixels of one frame for the
// first frame of a causal video tokenizer, space_factor^2 pixels x time_factor frames after it)
// and is replaced by the nearest of k centroids, one codebook for first-frame blocks and one for
// the others. The same token grid and bits per token as the tokenizer it stands beside, so a
// trained tokenizer that scores below it has not learned to code better than a 1980s codec.

#include "trainer/models/tokenizer.h"

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace tb::trainer::baseline {

/// How pixels map to tokens.
struct BlockGeometry {
  std::int64_t channels = 3;
  std::int64_t time_factor = 1;   ///< frames per token after the first frame (1: every frame alone)
  std::int64_t space_factor = 1;  ///< a token's block side, in pixels
  /// Causal video tokenizers code frame 0 alone (time_factor > 1 only): its blocks, one frame
  /// deep, have a codebook of their own.
  bool first_frame_alone = false;

  /// Values of one block: channels x time_factor x space_factor^2 (a first-frame block repeats
  /// its frame time_factor times, so both codebooks have rows of this size).
  std::int64_t blockDim() const { return channels * time_factor * space_factor * space_factor; }
  /// Codebooks: 2 with first_frame_alone, else 1.
  std::int64_t codebooks() const { return first_frame_alone ? 2 : 1; }
  /// The token grid [t, h, w] of clips of `frames` x `image_size`^2.
  std::array<std::int64_t, 3> tokenGrid(std::int64_t frames, std::int64_t image_size) const;
};

/// The geometry and codebook size of `config`'s tokenizer (its token grid for data.num_frames x
/// data.image_size, and 2^bits codes: codebook_size^num_codebooks). Throws std::invalid_argument
/// naming the field when the tokenizer cannot be built or its codebook is beyond 2^16 codes.
struct ReferenceShape {
  BlockGeometry geometry;
  std::int64_t codebook_size = 0;  ///< k centroids per codebook
  double bits_per_token = 0;       ///< log2(codebook_size)
};
ReferenceShape referenceShapeOf(const core::RunConfig& config);

/// The user-facing name: "classic VQ, 10 bits/token" (bits with up to two decimals).
std::string classicVqName(double bits_per_token);

/// The block codebooks as a Quantizer: latents are blocks `[B, D, t, h, w]` (D = blockDim());
/// latent frame 0 uses codebook 0 and the others codebook 1 when there are two. No losses.
class ClassicVqQuantizer : public Quantizer {
 public:
  /// `codebooks` [codebooks(), k, blockDim()] float32.
  ClassicVqQuantizer(const BlockGeometry& geometry, torch::Tensor codebooks);
  QuantizerOutput quantize(const torch::Tensor& latent) override;
  torch::Tensor indicesToCodes(const torch::Tensor& indices) override;
  std::int64_t dim() const override { return m_geometry.blockDim(); }
  std::int64_t codebookSize() const override { return m_codebooks.size(1); }
  const torch::Tensor& codebooks() const { return m_codebooks; }

 private:
  BlockGeometry m_geometry;
  torch::Tensor m_codebooks;
};

/// The codec as a Tokenizer: encode cuts a clip `[B, C, T, H, W]` (or an image `[B, C, H, W]`)
/// into blocks `[B, D, t, h, w]` and decode puts blocks back; T = 1 + (t - 1) x time_factor
/// with first_frame_alone, else t x time_factor. Values stay in the clip's own range ([-1, 1]).
/// It has no parameters: stats() reports zero.
class ClassicVqCodec : public Tokenizer {
 public:
  ClassicVqCodec(const BlockGeometry& geometry, torch::Tensor codebooks);

  torch::Tensor encode(const torch::Tensor& video, const torch::Tensor& cond = {}) override;
  torch::Tensor decode(const torch::Tensor& quantized, const torch::Tensor& cond = {}) override;
  std::shared_ptr<Quantizer> quantizer() const override { return m_quantizer; }
  torch::Tensor lastDecoderWeight() const override { return m_quantizer->codebooks(); }
  TokenizerStats stats(std::int64_t frames, std::int64_t image_size) const override;
  std::array<std::int64_t, 3> tokenGrid(std::int64_t frames,
                                        std::int64_t image_size) const override {
    return m_geometry.tokenGrid(frames, image_size);
  }
  const BlockGeometry& geometry() const { return m_geometry; }

 private:
  BlockGeometry m_geometry;
  std::shared_ptr<ClassicVqQuantizer> m_quantizer;
};

/// File names inside a codec folder (beside config.json, the configuration it was fitted for).
constexpr const char* kCodecFile = "codec.safetensors";  ///< tensor "codebooks" + geometry metadata
constexpr const char* kReferenceFile = "reference.json";  ///< core::ReferenceCodecInfo

/// True when `folder` holds a codec (its codec.safetensors exists).
bool isCodecFolder(const std::filesystem::path& folder);
/// Writes `codec` to `file` (safetensors: "codebooks" and the geometry as metadata).
void saveCodec(const ClassicVqCodec& codec, const std::filesystem::path& file,
               const std::map<std::string, std::string>& extra_metadata = {});
/// Reads a file saveCodec wrote. Throws std::runtime_error naming the file and what is wrong.
std::shared_ptr<ClassicVqCodec> loadCodec(const std::filesystem::path& file);

}  // namespace tb::trainer::baseline
