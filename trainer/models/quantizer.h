#pragma once
// The interface every quantizer (LFQ, FSQ, VQ) implements, and the factory that builds one from
// the configuration.

#include "core/run_config.h"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer {

/// Named scalar loss terms, in a fixed order per model (names are stable: they become metric keys).
using LossTerms = std::vector<std::pair<std::string, torch::Tensor>>;

/// What a quantizer returns for a latent `[B, D, *spatial]` (spatial: `t, h, w` or `h, w`).
struct QuantizerOutput {
  /// Quantized latent, same shape and dtype as the input; straight-through gradients in training.
  torch::Tensor quantized;
  /// Integer codes (int64): `[B, *spatial]` with one codebook, `[B, *spatial, num_codebooks]` with
  /// several. Values in [0, codebookSize()).
  torch::Tensor indices;
  /// Unweighted named terms (e.g. "per_sample_entropy", "codebook_entropy", "commitment");
  /// zero tensors outside training for terms only defined in training.
  LossTerms terms;
  /// The weighted sum the tokenizer adds to its loss (scalar).
  torch::Tensor loss;
};

/// Maps a rank-local batch mean to the mean over every rank of a data-parallel run, keeping it
/// differentiable. Quantizers apply it, in training only, to statistics that must cover the global
/// batch (LFQ's mean code probabilities for the codebook entropy).
using BatchMeanReducer = std::function<torch::Tensor(const torch::Tensor&)>;

/// Base of every quantizer module. Input and output are channel-first latents `[B, D, ...]`.
class Quantizer : public torch::nn::Module {
 public:
  /// Quantizes `latent` `[B, D, *spatial]` (D = dim()).
  virtual QuantizerOutput quantize(const torch::Tensor& latent) = 0;
  /// Inverse of the indices of quantize(): `[B, *spatial]` (or `[..., num_codebooks]`) ->
  /// `[B, D, *spatial]`, the same values quantize() returns (in eval mode).
  virtual torch::Tensor indicesToCodes(const torch::Tensor& indices) = 0;
  /// Latent channels D the quantizer consumes.
  virtual std::int64_t dim() const = 0;
  /// Codes per codebook.
  virtual std::int64_t codebookSize() const = 0;
  /// Codebooks per token (indices get a trailing dimension when > 1).
  virtual std::int64_t numCodebooks() const { return 1; }
  /// Information per token: num_codebooks x log2(codebook size).
  double bitsPerToken() const;

  /// Makes this quantizer's training statistics cover the global batch: a data-parallel run
  /// passes the all-reduce over its ranks (nullptr, the default: statistics stay local). Only
  /// this quantizer's forward becomes a collective, never another model's.
  void setBatchMeanReducer(BatchMeanReducer reduce) { m_batch_mean = std::move(reduce); }

 protected:
  /// `mean` over the local batch -> over the global batch (unchanged without a reducer).
  torch::Tensor globalBatchMean(const torch::Tensor& mean) const {
    return m_batch_mean ? m_batch_mean(mean) : mean;
  }

 private:
  BatchMeanReducer m_batch_mean;
};

/// Builds the quantizer named by `config.type` for latents of `dim` channels. Throws
/// std::invalid_argument naming the offending "model.quantizer.*" field.
std::shared_ptr<Quantizer> makeQuantizer(const core::QuantizerConfig& config, std::int64_t dim);

}  // namespace tb::trainer
