#pragma once
// Codebook-lookup vector quantization (VQ-VAE / taming VQGAN) with l2-normalised codes, EMA
// updates and restarts of dead codes.

#include "trainer/models/quantizer.h"

#include <torch/torch.h>

#include <cstdint>

namespace tb::trainer {

struct VectorQuantizerOptions {
  VectorQuantizerOptions(std::int64_t dim, std::int64_t codebook_size, std::int64_t codebook_dim)
      : dim_(dim), codebook_size_(codebook_size), codebook_dim_(codebook_dim) {}
  /// Latent channels D; projected to codebook_dim by linear layers when different.
  TORCH_ARG(std::int64_t, dim);
  TORCH_ARG(std::int64_t, codebook_size);
  TORCH_ARG(std::int64_t, codebook_dim);
  /// Commitment weight beta.
  TORCH_ARG(double, beta) = 0.25;
  /// Cosine lookup: latents and codes are l2-normalised.
  TORCH_ARG(bool, l2_normalize) = false;
  /// Update codes by exponential moving averages (no "codebook" gradient term).
  TORCH_ARG(bool, ema) = false;
  TORCH_ARG(double, ema_decay) = 0.99;
  /// Codes used fewer than this many times over a window of restart_window training forwards
  /// are replaced by randomly chosen encoder outputs of the current batch; 0 = off.
  TORCH_ARG(std::int64_t, dead_code_threshold) = 2;
  TORCH_ARG(std::int64_t, restart_window) = 100;
};

/// VQ: nearest code by squared euclidean distance (cosine with l2_normalize).
/// Terms: "codebook" (|sg(z) - e|^2; zero with EMA), "commitment" (|z - sg(e)|^2),
/// loss = codebook + beta x commitment. Persistent state (saved with the weights): codebook
/// `embedding.weight` [codebook_size, codebook_dim]; `ema_cluster_size` [codebook_size] and
/// `ema_embed_sum` [codebook_size, codebook_dim]; `usage` [codebook_size] (uses in the current
/// window) and `window_step` [] (training forwards in it).
class VectorQuantizerImpl : public Quantizer {
 public:
  explicit VectorQuantizerImpl(const VectorQuantizerOptions& options);

  QuantizerOutput quantize(const torch::Tensor& latent) override;
  torch::Tensor indicesToCodes(const torch::Tensor& indices) override;
  std::int64_t dim() const override { return m_options.dim(); }
  std::int64_t codebookSize() const override { return m_options.codebook_size(); }

  /// Codes restarted so far (since construction), for tests and metrics.
  std::int64_t restartedCodes() const { return m_restarted; }

  torch::nn::Embedding embedding{nullptr};
  torch::nn::Linear project_in{nullptr};
  torch::nn::Linear project_out{nullptr};

 private:
  torch::Tensor codes() const;  // [K, d], normalised when configured
  void emaUpdate(const torch::Tensor& flat, const torch::Tensor& idx);
  void trackUsageAndRestart(const torch::Tensor& flat, const torch::Tensor& idx);

  VectorQuantizerOptions m_options;
  torch::Tensor m_cluster_size, m_embed_sum, m_usage, m_window_step;
  std::int64_t m_restarted = 0;
};
TORCH_MODULE(VectorQuantizer);

}  // namespace tb::trainer
