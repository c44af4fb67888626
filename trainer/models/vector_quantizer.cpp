// Vector quantization with a learned (or EMA) codebook and dead-code restarts.
#include "trainer/models/vector_quantizer.h"

#include "trainer/models/quantizer_tokens.h"

namespace tb::trainer {
namespace F = torch::nn::functional;
using quantizer_tokens::fromTokens;
using quantizer_tokens::indicesFromTokens;
using quantizer_tokens::require;
using quantizer_tokens::toTokens;

VectorQuantizerImpl::VectorQuantizerImpl(const VectorQuantizerOptions& options)
    : m_options(options) {
  require(options.dim() >= 1, "dim", "must be >= 1");
  require(options.codebook_size() >= 2, "codebook_size", "must be >= 2");
  require(options.codebook_dim() >= 1, "codebook_dim", "must be >= 1");
  require(options.beta() >= 0, "vq_beta", "must be >= 0");
  require(options.ema_decay() >= 0 && options.ema_decay() <= 1, "vq_ema_decay",
          "must be in [0, 1]");
  require(options.dead_code_threshold() >= 0, "vq_dead_code_threshold", "must be >= 0");
  require(options.restart_window() >= 1, "restart_window", "must be >= 1");
  const std::int64_t k = options.codebook_size(), d = options.codebook_dim();
  embedding = register_module("embedding", torch::nn::Embedding(k, d));
  {
    torch::NoGradGuard no_grad;
    embedding->weight.uniform_(-1.0 / static_cast<double>(k),
                               1.0 / static_cast<double>(k));  // taming's init
  }
  if (options.ema()) embedding->weight.set_requires_grad(false);
  if (options.dim() != d) {
    project_in = register_module("project_in", torch::nn::Linear(options.dim(), d));
    project_out = register_module("project_out", torch::nn::Linear(d, options.dim()));
  }
  m_cluster_size = register_buffer("ema_cluster_size", torch::zeros({k}));
  m_embed_sum = register_buffer("ema_embed_sum", embedding->weight.detach().clone());
  m_usage = register_buffer("usage", torch::zeros({k}));
  m_window_step = register_buffer("window_step", torch::zeros({}, torch::kLong));
}

torch::Tensor VectorQuantizerImpl::codes() const {
  const auto w = embedding->weight;
  return m_options.l2_normalize() ? F::normalize(w, F::NormalizeFuncOptions().dim(-1)) : w;
}

void VectorQuantizerImpl::emaUpdate(const torch::Tensor& flat, const torch::Tensor& idx) {
  torch::NoGradGuard no_grad;
  const double decay = m_options.ema_decay();
  const std::int64_t k = m_options.codebook_size();
  const auto onehot = F::one_hot(idx, k).to(flat.scalar_type());  // [N, K]
  m_cluster_size.mul_(decay).add_(onehot.sum(0), 1 - decay);
  m_embed_sum.mul_(decay).add_(torch::matmul(onehot.t(), flat), 1 - decay);
  const double eps = 1e-5;
  const auto n = m_cluster_size.sum();
  const auto smoothed = (m_cluster_size + eps) / (n + k * eps) * n;
  auto updated = m_embed_sum / smoothed.unsqueeze(1);
  if (m_options.l2_normalize()) updated = F::normalize(updated, F::NormalizeFuncOptions().dim(-1));
  embedding->weight.copy_(updated);
}

void VectorQuantizerImpl::trackUsageAndRestart(const torch::Tensor& flat,
                                               const torch::Tensor& idx) {
  if (m_options.dead_code_threshold() <= 0) return;
  torch::NoGradGuard no_grad;
  const std::int64_t k = m_options.codebook_size();
  m_usage.add_(torch::bincount(idx, {}, k).to(m_usage.scalar_type()));
  m_window_step.add_(1);
  if (m_window_step.item<std::int64_t>() < m_options.restart_window()) return;
  const auto dead =
      torch::nonzero(m_usage < static_cast<double>(m_options.dead_code_threshold())).flatten();
  const std::int64_t n_dead = dead.numel();
  if (n_dead > 0 && flat.size(0) > 0) {
    const auto pick = torch::randint(
        flat.size(0), {n_dead}, torch::TensorOptions().dtype(torch::kLong).device(flat.device()));
    auto fresh = flat.index_select(0, pick).to(embedding->weight.scalar_type());
    if (m_options.l2_normalize()) fresh = F::normalize(fresh, F::NormalizeFuncOptions().dim(-1));
    embedding->weight.index_copy_(0, dead, fresh);
    if (m_options.ema()) {
      m_embed_sum.index_copy_(0, dead, fresh);
      m_cluster_size.index_fill_(0, dead, 1.0);
    }
    m_restarted += n_dead;
  }
  m_usage.zero_();
  m_window_step.zero_();
}

QuantizerOutput VectorQuantizerImpl::quantize(const torch::Tensor& latent) {
  std::vector<std::int64_t> spatial;
  TORCH_CHECK(latent.size(1) == m_options.dim(), "VQ expects ", m_options.dim(), " channels, got ",
              latent.size(1));
  auto x = toTokens(latent, spatial);
  const std::int64_t batch = x.size(0), tokens = x.size(1), d = m_options.codebook_dim();
  if (project_in) x = project_in(x);
  auto flat = x.reshape({batch * tokens, d});
  if (m_options.l2_normalize()) flat = F::normalize(flat, F::NormalizeFuncOptions().dim(-1));
  const auto e = codes();
  const auto dist =
      flat.pow(2).sum(1, true) + e.pow(2).sum(1).unsqueeze(0) - 2 * torch::matmul(flat, e.t());
  const auto idx = dist.argmin(1);
  const auto zq = e.index_select(0, idx);
  const auto commitment = F::mse_loss(flat, zq.detach());
  const auto codebook_term =
      m_options.ema() ? torch::zeros({}, flat.options()) : F::mse_loss(zq, flat.detach());
  if (is_training()) {
    if (m_options.ema()) emaUpdate(flat.detach(), idx);
    trackUsageAndRestart(flat.detach(), idx);
  }
  auto q = (flat + (zq - flat).detach()).reshape({batch, tokens, d});
  if (project_out) q = project_out(q);
  QuantizerOutput result;
  result.quantized = fromTokens(q, spatial);
  result.indices = indicesFromTokens(idx, batch, spatial, 1);
  result.terms = {{"codebook", codebook_term}, {"commitment", commitment}};
  result.loss = codebook_term + commitment * m_options.beta();
  return result;
}

torch::Tensor VectorQuantizerImpl::indicesToCodes(const torch::Tensor& indices) {
  auto c = codes().index_select(0, indices.to(torch::kLong).flatten());
  std::vector<std::int64_t> shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(m_options.codebook_dim());
  c = c.reshape(shape);
  if (project_out) c = project_out(c);
  std::vector<std::int64_t> perm{0, c.dim() - 1};
  for (std::int64_t i = 1; i < c.dim() - 1; ++i) perm.push_back(i);
  return c.permute(perm).contiguous();
}

// ---------------------------------------------------------------------------------------------

}  // namespace tb::trainer
