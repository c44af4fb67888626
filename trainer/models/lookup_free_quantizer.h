#pragma once
// Lookup-free quantization (MAGVIT-v2, arXiv:2310.05737) with the binary spherical (BSQ) option,
// after vector-quantize-pytorch's LFQ.

#include "core/config_choices.h"
#include "trainer/models/quantizer.h"

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace tb::trainer {

/// How the codebook (batch) entropy is computed (model.quantizer.entropy_estimate): Auto, exact
/// up to 12 bits per codebook and factorised above; Exact, a softmax over all 2^K codes per token
/// (O(tokens x 2^K) time and memory); Factorized, the sum of the exact entropies of bit groups of
/// at most max_group_bits bits.
using core::EntropyEstimate;

struct LookupFreeQuantizerOptions {
  LookupFreeQuantizerOptions(std::int64_t dim, std::int64_t codebook_size)
      : dim_(dim), codebook_size_(codebook_size) {}
  /// Latent channels D; inputs are projected to num_codebooks x K by a linear layer when different.
  TORCH_ARG(std::int64_t, dim);
  /// Codes per codebook, 2^K.
  TORCH_ARG(std::int64_t, codebook_size);
  TORCH_ARG(std::int64_t, num_codebooks) = 1;
  TORCH_ARG(double, entropy_loss_weight) = 0.1;
  TORCH_ARG(double, commitment_loss_weight) = 0.25;
  TORCH_ARG(double, diversity_gamma) = 1.0;
  /// tanh soft clamp of the projected inputs to +-value; 0 = off.
  TORCH_ARG(double, soft_clamp) = 0.0;
  /// BSQ: l2-normalise inputs per codebook; codes are +-1/sqrt(K).
  TORCH_ARG(bool, spherical) = false;
  /// Temperature inverse of the code distribution used by the entropy terms (reference: 100).
  TORCH_ARG(double, inv_temperature) = 100.0;
  TORCH_ARG(EntropyEstimate, entropy_estimate) = EntropyEstimate::Auto;
  /// Largest bit group of the factorised estimate (and the Auto threshold).
  TORCH_ARG(std::int64_t, max_group_bits) = 12;
};

/// Lookup-free quantizer: each of the K projected channels becomes a bit, sign -> +-1.
///
/// Loss terms (unweighted), in order:
/// - "per_sample_entropy": mean over tokens of the entropy of each token's code distribution
///   p(c) ~ exp(2 tau <x, c>). It factorises over bits (p is a product of per-bit Bernoullis with
///   p(bit) = sigmoid(4 tau s x_k)), so it is computed exactly as the sum of K binary entropies:
///   O(tokens x K), for any K.
/// - "codebook_entropy": entropy of the batch-averaged code distribution, mean over codebooks.
///   Exact path as the reference ([tokens x 2^K] softmax, log clamped at 1e-5). Factorised path:
///   the K bits are split into ceil(K / max_group_bits) groups of near-equal size, and the exact
///   entropy of each group's batch-averaged marginal is summed. By subadditivity this is an upper
///   bound of the exact value, equal when bit groups are independent under the batch average; it
///   costs O(tokens x sum 2^|group|) (2 x 2^9 per token for K = 18).
/// - "commitment": mean squared distance between the (projected) input and its code.
/// loss = entropy_loss_weight x (per_sample_entropy - diversity_gamma x codebook_entropy)
///        + commitment_loss_weight x commitment. Entropy terms are zero outside training.
///
/// Index of a code: bit k (k = 0 first channel) has weight 2^(K-1-k); bit is 1 for a positive
/// value.
class LookupFreeQuantizerImpl : public Quantizer {
 public:
  explicit LookupFreeQuantizerImpl(const LookupFreeQuantizerOptions& options);

  QuantizerOutput quantize(const torch::Tensor& latent) override;
  torch::Tensor indicesToCodes(const torch::Tensor& indices) override;
  std::int64_t dim() const override { return m_options.dim(); }
  std::int64_t codebookSize() const override { return m_options.codebook_size(); }
  std::int64_t numCodebooks() const override { return m_options.num_codebooks(); }
  std::int64_t bitsPerCodebook() const { return m_bits; }

  /// Entropy terms for projected inputs `x` `[N, num_codebooks, K]` (before quantization):
  /// {per_sample_entropy, codebook_entropy} with the configured estimate.
  std::pair<torch::Tensor, torch::Tensor> entropyTerms(const torch::Tensor& x) const;
  /// Same with an explicit estimate (Auto resolves by K), for tests and diagnostics.
  std::pair<torch::Tensor, torch::Tensor> entropyTerms(const torch::Tensor& x,
                                                       EntropyEstimate estimate) const;
  /// The reference formula, materialising [N, num_codebooks, 2^K] probabilities (small K only).
  std::pair<torch::Tensor, torch::Tensor> entropyTermsReference(const torch::Tensor& x) const;

  const LookupFreeQuantizerOptions& options() const { return m_options; }

  torch::nn::Linear project_in{nullptr};
  torch::nn::Linear project_out{nullptr};

 private:
  double codeScale() const;
  torch::Tensor bitWeights(const torch::Device& device) const;  // [K] int64, MSB first
  torch::Tensor codebook(const torch::Tensor& like,
                         std::int64_t bits) const;  // [2^bits, bits], +-scale

  LookupFreeQuantizerOptions m_options;
  std::int64_t m_bits = 0;
};
TORCH_MODULE(LookupFreeQuantizer);

/// Parses "auto" / "exact" / "factorized"; throws std::invalid_argument otherwise.

}  // namespace tb::trainer
