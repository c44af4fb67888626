#pragma once
// Finite scalar quantization (arXiv:2309.15505), after vector-quantize-pytorch's FSQ.

#include "trainer/models/quantizer.h"

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace tb::trainer {

struct FiniteScalarQuantizerOptions {
  FiniteScalarQuantizerOptions(std::int64_t dim, std::vector<std::int64_t> levels)
      : dim_(dim), levels_(std::move(levels)) {}
  /// Latent channels D; projected to levels.size() x num_codebooks when different.
  TORCH_ARG(std::int64_t, dim);
  /// Levels per quantized channel, each >= 2; the codebook has their product of codes.
  TORCH_ARG(std::vector<std::int64_t>, levels);
  TORCH_ARG(std::int64_t, num_codebooks) = 1;
  /// Weight of the "commitment" term (bounded input vs its rounded value); 0 = off. It pulls every
  /// value onto its level, and the extreme levels lie where tanh is flat (|argument| near 4): a
  /// value pulled there stops learning, so the codes pile up on the extremes (0 suits FSQ best).
  TORCH_ARG(double, commitment_loss_weight) = 0.0;
  /// Weight of the level-entropy term: the loss gains weight x (1 - "level_entropy"); 0 = off.
  TORCH_ARG(double, entropy_loss_weight) = 0.0;
};

/// FSQ: each channel is bounded by tanh to (level-1)/2 and rounded (straight-through); codes lie in
/// [-1, 1]. Index = sum_i digit_i x prod_{j<i} levels_j with digit_i in [0, levels_i).
/// Terms: "commitment" (mean squared rounding error of the bounded input) and "level_entropy":
/// how evenly each channel uses its levels over the (global) batch, 1 when every level is as
/// frequent as every other: the entropy of the batch-mean soft assignment of the bounded values
/// to the levels (softmax of -distance^2 / 0.25), divided by log(levels), averaged over channels.
/// Training only (zero otherwise).
class FiniteScalarQuantizerImpl : public Quantizer {
 public:
  explicit FiniteScalarQuantizerImpl(const FiniteScalarQuantizerOptions& options);

  QuantizerOutput quantize(const torch::Tensor& latent) override;
  torch::Tensor indicesToCodes(const torch::Tensor& indices) override;
  std::int64_t dim() const override { return m_options.dim(); }
  std::int64_t codebookSize() const override { return m_codebook_size; }
  std::int64_t numCodebooks() const override { return m_options.num_codebooks(); }

  torch::nn::Linear project_in{nullptr};
  torch::nn::Linear project_out{nullptr};

 private:
  torch::Tensor bound(const torch::Tensor& z) const;
  /// "level_entropy" of bounded values `[B, N, C, d]`.
  torch::Tensor levelEntropy(const torch::Tensor& bounded) const;

  FiniteScalarQuantizerOptions m_options;
  std::int64_t m_codebook_size = 1;
  torch::Tensor m_levels;  // [d] float
  torch::Tensor m_basis;   // [d] int64
};
TORCH_MODULE(FiniteScalarQuantizer);

}  // namespace tb::trainer
