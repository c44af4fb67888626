#include "trainer/evaluation/validator.h"

#include "core/metric_names.h"
#include "trainer/training/training_step.h"

#include <cmath>

namespace tb::trainer {

std::vector<std::pair<std::string, double>> ValidationSummary::metricValues() const {
  std::vector<std::pair<std::string, double>> values = {
      {std::string(core::metric::kValidReconLoss), recon_loss},
      {std::string(core::metric::kValidPsnr), psnr},
      {std::string(core::metric::kValidSsim), ssim},
      {std::string(core::metric::kValidCodebookUsage), codebook_usage},
      {std::string(core::metric::kValidPerplexity), perplexity}};
  if (has_lpips) values.emplace_back(std::string(core::metric::kValidLpips), lpips);
  return values;
}

Validator::Validator(Tokenizer& tokenizer, metrics::Lpips lpips, core::ReconLoss recon_loss)
    : m_tokenizer(tokenizer),
      m_lpips(std::move(lpips)),
      m_loss_term(recon_loss == core::ReconLoss::Mse ? "recon_mse" : "recon_l1") {
  m_summary.code_counts.assign(static_cast<std::size_t>(tokenizer.quantizer()->codebookSize()), 0);
  m_summary.has_lpips = static_cast<bool>(m_lpips);
}

ClipValidation Validator::score(const torch::Tensor& clip, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  const bool was_training = m_tokenizer.is_training();
  m_tokenizer.eval();
  const torch::Tensor x = clip.unsqueeze(0).to(device);
  TokenizerOutput out;
  if (m_chunk > 0 && m_tokenizer.codesTimeInChunks()) {
    out.indices = m_tokenizer.tokenizeVideo(x, m_chunk);
    out.recon = m_tokenizer.decodeVideo(out.indices, m_chunk);
    out.losses = {{"recon_l1", torch::nn::functional::l1_loss(out.recon, x)},
                  {"recon_mse", torch::nn::functional::mse_loss(out.recon, x)}};
  } else {
    out = m_tokenizer.forward(x);
  }
  if (was_training) m_tokenizer.train();

  ClipValidation v;
  v.recon = out.recon[0];
  v.recon_loss = lossTerm(out, m_loss_term).item<double>();
  v.scores = metrics::scoreClip(x[0], v.recon);
  if (m_lpips) v.lpips = metrics::lpips(m_lpips, v.scores.original, v.scores.decoded);

  std::vector<std::int64_t>& counts = m_summary.code_counts;
  const torch::Tensor idx = out.indices.reshape({-1}).to(torch::kCPU, torch::kInt64).contiguous();
  const auto* p = idx.data_ptr<std::int64_t>();
  for (std::int64_t k = 0; k < idx.numel(); ++k) {
    if (p[k] >= 0 && p[k] < static_cast<std::int64_t>(counts.size()))
      ++counts[static_cast<std::size_t>(p[k])];
  }
  m_tokens += idx.numel();

  const double n = static_cast<double>(++m_summary.clips);
  m_sum_recon += v.recon_loss;
  m_sum_psnr += v.scores.psnr;
  m_sum_ssim += v.scores.ssim;
  m_sum_lpips += v.lpips;
  m_summary.recon_loss = m_sum_recon / n;
  m_summary.psnr = m_sum_psnr / n;
  m_summary.ssim = m_sum_ssim / n;
  m_summary.lpips = m_sum_lpips / n;
  double entropy = 0;
  std::int64_t used = 0;
  for (const auto c : counts) {
    if (c == 0) continue;
    ++used;
    const double q = static_cast<double>(c) / static_cast<double>(m_tokens);
    entropy -= q * std::log(q);
  }
  m_summary.codebook_usage = static_cast<double>(used) / static_cast<double>(counts.size());
  m_summary.perplexity = std::exp(entropy);
  return v;
}

EmaWeightsInUse::EmaWeightsInUse(Tokenizer& tokenizer,
                                 const std::vector<std::pair<std::string, torch::Tensor>>& ema) {
  if (ema.empty()) return;
  torch::NoGradGuard no_grad;
  auto params = tokenizer.named_parameters();
  for (const auto& [name, average] : ema) {
    torch::Tensor p = params[name];
    m_saved.emplace_back(p, p.detach().clone());
    p.copy_(average);
  }
}

EmaWeightsInUse::~EmaWeightsInUse() {
  torch::NoGradGuard no_grad;
  for (auto& [p, trained] : m_saved) p.copy_(trained);
}

}  // namespace tb::trainer
