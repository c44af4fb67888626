#pragma once
// Validation of a tokenizer on held-out clips, shared by training (`valid/*` metrics) and
// `compare`: each clip goes through the tokenizer once and is scored by metrics::scoreClip on
// the 8-bit frames a viewer sees, so a run's last valid/psnr and compare's figure for the same
// weights and clips are the same number.

#include "trainer/evaluation/clip_scores.h"
#include "trainer/evaluation/lpips.h"
#include "trainer/models/tokenizer.h"

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer {

/// One clip through the tokenizer and its scores.
struct ClipValidation {
  torch::Tensor recon;         ///< `[3, T, H, W]`, about [-1, 1], on the tokenizer's device
  metrics::ClipScores scores;  ///< PSNR/SSIM on 8-bit frames, per frame and mean
  double lpips = 0;            ///< LPIPS of the 8-bit frames; 0 without an LPIPS net
  double recon_loss = 0;       ///< the training loss's reconstruction term (l1 or mse)
};

/// Means over the clips scored so far, and how often each code was used.
struct ValidationSummary {
  std::int64_t clips = 0;
  double recon_loss = 0, psnr = 0, ssim = 0, lpips = 0;
  double codebook_usage = 0;              ///< fraction of the codebook's codes used at least once
  double perplexity = 0;                  ///< exp of the entropy of the code frequencies
  std::vector<std::int64_t> code_counts;  ///< by code index, over every token of every clip
  bool has_lpips = false;

  /// The metric rows training logs: valid/recon_loss, valid/psnr, valid/ssim,
  /// valid/codebook_usage, valid/perplexity (and valid/lpips with an LPIPS net).
  std::vector<std::pair<std::string, double>> metricValues() const;
};

/// Scores clips with one tokenizer in eval mode and no gradients. Not thread-safe.
class Validator {
 public:
  /// `recon_loss` is loss.recon; `lpips` may be null (no LPIPS figures).
  Validator(Tokenizer& tokenizer, metrics::Lpips lpips, core::ReconLoss recon_loss);

  /// Runs one clip `[3, T, H, W]` in [-1, 1] (any device; moved to `device`) and adds it to the
  /// summary.
  ClipValidation score(const torch::Tensor& clip, const torch::Device& device);

  const ValidationSummary& summary() const { return m_summary; }

  /// score() codes each clip `chunk` latent frames at a time (Tokenizer::tokenizeVideo and
  /// decodeVideo: the figures of one pass, the memory of one chunk) when the tokenizer can;
  /// 0 (the default): one forward pass.
  void setTimeChunk(std::int64_t chunk) { m_chunk = chunk; }

 private:
  Tokenizer& m_tokenizer;
  std::int64_t m_chunk = 0;
  metrics::Lpips m_lpips;
  std::string m_loss_term;
  ValidationSummary m_summary;
  std::int64_t m_tokens = 0;
  double m_sum_recon = 0, m_sum_psnr = 0, m_sum_ssim = 0, m_sum_lpips = 0;
};

/// Swaps the EMA's averages into the tokenizer's parameters for the life of the guard (nothing
/// when `ema` is empty), then puts the trained weights back.
class EmaWeightsInUse {
 public:
  EmaWeightsInUse(Tokenizer& tokenizer,
                  const std::vector<std::pair<std::string, torch::Tensor>>& ema);
  ~EmaWeightsInUse();
  EmaWeightsInUse(const EmaWeightsInUse&) = delete;
  EmaWeightsInUse& operator=(const EmaWeightsInUse&) = delete;

 private:
  std::vector<std::pair<torch::Tensor, torch::Tensor>> m_saved;  // parameter, its trained value
};

}  // namespace tb::trainer
