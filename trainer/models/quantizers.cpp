// LFQ, FSQ and VQ, and the quantizer factory.
#include "trainer/models/finite_scalar_quantizer.h"
#include "trainer/models/lookup_free_quantizer.h"
#include "trainer/models/vector_quantizer.h"

#include <cmath>
#include <stdexcept>

namespace tb::trainer {
namespace F = torch::nn::functional;
namespace {

// [B, D, *S] -> [B, N, D]; `spatial` receives S.
torch::Tensor toTokens(const torch::Tensor& latent, std::vector<std::int64_t>& spatial) {
  TORCH_CHECK(latent.dim() >= 2, "quantizer input must be [B, D, ...], got ", latent.sizes());
  spatial.assign(latent.sizes().begin() + 2, latent.sizes().end());
  return latent.flatten(2).transpose(1, 2);
}

// [B, N, D] -> [B, D, *S]
torch::Tensor fromTokens(const torch::Tensor& tokens, const std::vector<std::int64_t>& spatial) {
  std::vector<std::int64_t> shape{tokens.size(0), tokens.size(2)};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  return tokens.transpose(1, 2).reshape(shape);
}

// [B, N] or [B, N, C] -> [B, *S] or [B, *S, C]
torch::Tensor indicesFromTokens(const torch::Tensor& idx, std::int64_t batch,
                                const std::vector<std::int64_t>& spatial, std::int64_t codebooks) {
  std::vector<std::int64_t> shape{batch};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  if (codebooks > 1) shape.push_back(codebooks);
  return idx.reshape(shape);
}

torch::Tensor entropyOf(const torch::Tensor& prob) {  // reference: log clamped at 1e-5
  return (-prob * prob.clamp_min(1e-5).log()).sum(-1);
}

void require(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw std::invalid_argument(field + ": " + message);
}

bool isPowerOfTwo(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

double Quantizer::bitsPerToken() const {
  return static_cast<double>(numCodebooks()) * std::log2(static_cast<double>(codebookSize()));
}

EntropyEstimate parseEntropyEstimate(const std::string& name) {
  if (name == "auto") return EntropyEstimate::Auto;
  if (name == "exact") return EntropyEstimate::Exact;
  if (name == "factorized") return EntropyEstimate::Factorized;
  throw std::invalid_argument("entropy_estimate: expected auto, exact or factorized, got \"" +
                              name + "\"");
}

// ---------------------------------------------------------------------------------------------
// LFQ

LookupFreeQuantizerImpl::LookupFreeQuantizerImpl(const LookupFreeQuantizerOptions& options)
    : m_options(options) {
  require(options.dim() >= 1, "dim", "must be >= 1");
  require(isPowerOfTwo(options.codebook_size()) && options.codebook_size() >= 2, "codebook_size",
          "must be a power of two >= 2 for lfq, got " + std::to_string(options.codebook_size()));
  require(options.num_codebooks() >= 1, "num_codebooks", "must be >= 1");
  require(options.max_group_bits() >= 1 && options.max_group_bits() <= 20, "max_group_bits",
          "must be in [1, 20]");
  require(options.soft_clamp() >= 0, "soft_clamp", "must be >= 0");
  require(options.inv_temperature() > 0, "inv_temperature", "must be > 0");
  m_bits = static_cast<std::int64_t>(
      std::llround(std::log2(static_cast<double>(options.codebook_size()))));
  require(m_bits <= 30, "codebook_size", "at most 2^30 codes");
  const std::int64_t code_dims = m_bits * options.num_codebooks();
  if (options.dim() != code_dims) {
    project_in = register_module("project_in", torch::nn::Linear(options.dim(), code_dims));
    project_out = register_module("project_out", torch::nn::Linear(code_dims, options.dim()));
  }
}

double LookupFreeQuantizerImpl::codeScale() const {
  return m_options.spherical() ? 1.0 / std::sqrt(static_cast<double>(m_bits)) : 1.0;
}

torch::Tensor LookupFreeQuantizerImpl::bitWeights(const torch::Device& device) const {
  return torch::pow(2, torch::arange(m_bits - 1, -1, -1,
                                     torch::TensorOptions().dtype(torch::kLong).device(device)));
}

torch::Tensor LookupFreeQuantizerImpl::codebook(const torch::Tensor& like,
                                                std::int64_t bits) const {
  auto opts = torch::TensorOptions().dtype(torch::kLong).device(like.device());
  const auto all = torch::arange(std::int64_t{1} << bits, opts).unsqueeze(-1);
  const auto mask = torch::pow(2, torch::arange(bits - 1, -1, -1, opts));
  const auto b = torch::bitwise_and(all, mask).ne(0).to(like.scalar_type());
  return (b * 2 - 1) * codeScale();
}

std::pair<torch::Tensor, torch::Tensor> LookupFreeQuantizerImpl::entropyTerms(
    const torch::Tensor& x) const {
  return entropyTerms(x, m_options.entropy_estimate());
}

std::pair<torch::Tensor, torch::Tensor> LookupFreeQuantizerImpl::entropyTerms(
    const torch::Tensor& x, EntropyEstimate estimate) const {
  TORCH_CHECK(x.dim() == 3 && x.size(2) == m_bits, "entropyTerms expects [N, C, K], got ",
              x.sizes());
  if (estimate == EntropyEstimate::Auto)
    estimate =
        m_bits <= m_options.max_group_bits() ? EntropyEstimate::Exact : EntropyEstimate::Factorized;
  const double s = codeScale();
  const double tau = m_options.inv_temperature();
  // logit(code) = 2 tau <x, code>: per bit, p(+) = sigmoid(4 tau s x).
  const auto z = x.to(torch::kFloat) * (4.0 * tau * s);
  const auto p = torch::sigmoid(z);
  const auto bit_entropy = -(p * F::logsigmoid(z) + (1 - p) * F::logsigmoid(-z));
  const auto per_sample = bit_entropy.sum(-1).mean();

  std::vector<std::pair<std::int64_t, std::int64_t>> groups;  // [begin, end) bits
  if (estimate == EntropyEstimate::Exact) {
    groups.emplace_back(0, m_bits);
  } else {
    const std::int64_t g = m_options.max_group_bits();
    const std::int64_t n = (m_bits + g - 1) / g;
    std::int64_t begin = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t size = m_bits / n + (i < m_bits % n ? 1 : 0);
      groups.emplace_back(begin, begin + size);
      begin += size;
    }
  }
  torch::Tensor codebook_entropy = torch::zeros({}, z.options());
  const auto xf = x.to(torch::kFloat);
  for (const auto& [b, e] : groups) {
    const auto part = xf.slice(2, b, e);                            // [N, C, g]
    const auto cb = codebook(part, e - b);                          // [2^g, g]
    const auto logits = torch::matmul(part, cb.t()) * (2.0 * tau);  // [N, C, 2^g]
    auto avg = torch::softmax(logits, -1).mean(0);                  // [C, 2^g]
    if (is_training()) avg = globalBatchMean(avg);
    codebook_entropy = codebook_entropy + entropyOf(avg).mean();
  }
  return {per_sample, codebook_entropy};
}

std::pair<torch::Tensor, torch::Tensor> LookupFreeQuantizerImpl::entropyTermsReference(
    const torch::Tensor& x) const {
  TORCH_CHECK(m_bits <= 16,
              "entropyTermsReference materialises 2^K probabilities; K must be <= 16");
  const auto xf = x.to(torch::kFloat);
  const auto cb = codebook(xf, m_bits);
  const auto distance = -2 * torch::matmul(xf, cb.t());
  const auto prob = torch::softmax(-distance * m_options.inv_temperature(), -1);
  return {entropyOf(prob).mean(), entropyOf(prob.mean(0)).mean()};
}

QuantizerOutput LookupFreeQuantizerImpl::quantize(const torch::Tensor& latent) {
  std::vector<std::int64_t> spatial;
  TORCH_CHECK(latent.size(1) == m_options.dim(), "LFQ expects ", m_options.dim(), " channels, got ",
              latent.size(1));
  auto x = toTokens(latent, spatial);  // [B, N, D]
  const std::int64_t batch = x.size(0), tokens = x.size(1), cbs = m_options.num_codebooks();
  if (project_in) x = project_in(x);
  if (m_options.soft_clamp() > 0)
    x = torch::tanh(x / m_options.soft_clamp()) * m_options.soft_clamp();
  x = x.reshape({batch, tokens, cbs, m_bits});
  if (m_options.spherical()) x = F::normalize(x, F::NormalizeFuncOptions().dim(-1));
  const auto original = x;
  const double s = codeScale();
  const auto quantized = torch::where(x > 0, torch::full_like(x, s), torch::full_like(x, -s));
  const auto out = is_training() ? x + (quantized - x).detach() : quantized;
  const auto indices = ((x > 0).to(torch::kLong) * bitWeights(x.device())).sum(-1);  // [B, N, C]

  torch::Tensor per_sample = torch::zeros({}, x.options()),
                cb_entropy = torch::zeros({}, x.options());
  torch::Tensor commitment = torch::zeros({}, x.options());
  if (is_training()) {
    std::tie(per_sample, cb_entropy) =
        entropyTerms(original.reshape({batch * tokens, cbs, m_bits}));
    commitment = F::mse_loss(original, quantized.detach());
  }
  auto q = out.reshape({batch, tokens, cbs * m_bits});
  if (project_out) q = project_out(q);
  QuantizerOutput result;
  result.quantized = fromTokens(q, spatial);
  result.indices = indicesFromTokens(indices, batch, spatial, cbs);
  result.terms = {{"per_sample_entropy", per_sample},
                  {"codebook_entropy", cb_entropy},
                  {"commitment", commitment}};
  result.loss =
      (per_sample - m_options.diversity_gamma() * cb_entropy) * m_options.entropy_loss_weight() +
      commitment * m_options.commitment_loss_weight();
  return result;
}

torch::Tensor LookupFreeQuantizerImpl::indicesToCodes(const torch::Tensor& indices) {
  const std::int64_t cbs = m_options.num_codebooks();
  auto idx = cbs == 1 ? indices.unsqueeze(-1) : indices;  // [B, *S, C]
  TORCH_CHECK(idx.size(-1) == cbs, "indices must end with ", cbs, " codebooks, got ",
              indices.sizes());
  const auto bits =
      torch::bitwise_and(idx.to(torch::kLong).unsqueeze(-1), bitWeights(idx.device())).ne(0);
  const double s = codeScale();
  const auto options =
      project_out ? project_out->weight.options() : torch::TensorOptions().device(idx.device());
  auto codes = (bits.to(options.dtype()) * 2 - 1) * s;  // [B, *S, C, K]
  codes = codes.flatten(-2);
  if (project_out) codes = project_out(codes);
  // [B, *S, D] -> [B, D, *S]
  std::vector<std::int64_t> perm{0, codes.dim() - 1};
  for (std::int64_t i = 1; i < codes.dim() - 1; ++i) perm.push_back(i);
  return codes.permute(perm).contiguous();
}

// ---------------------------------------------------------------------------------------------
// FSQ

FiniteScalarQuantizerImpl::FiniteScalarQuantizerImpl(const FiniteScalarQuantizerOptions& options)
    : m_options(options) {
  require(options.dim() >= 1, "dim", "must be >= 1");
  require(!options.levels().empty(), "fsq_levels", "must not be empty");
  require(options.num_codebooks() >= 1, "num_codebooks", "must be >= 1");
  std::vector<std::int64_t> basis;
  for (std::size_t i = 0; i < options.levels().size(); ++i) {
    require(options.levels()[i] >= 2, "fsq_levels[" + std::to_string(i) + "]", "must be >= 2");
    basis.push_back(m_codebook_size);
    m_codebook_size *= options.levels()[i];
    require(m_codebook_size <= (std::int64_t{1} << 40), "fsq_levels", "product too large");
  }
  m_levels = torch::tensor(options.levels(), torch::kLong).to(torch::kFloat);
  m_basis = torch::tensor(basis, torch::kLong);
  const std::int64_t eff =
      static_cast<std::int64_t>(options.levels().size()) * options.num_codebooks();
  if (options.dim() != eff) {
    project_in = register_module("project_in", torch::nn::Linear(options.dim(), eff));
    project_out = register_module("project_out", torch::nn::Linear(eff, options.dim()));
  }
}

torch::Tensor FiniteScalarQuantizerImpl::bound(const torch::Tensor& z) const {
  const double eps = 1e-3;
  const auto levels = m_levels.to(z.device());
  const auto half_l = (levels - 1) * (1 + eps) / 2;
  const auto offset = torch::where(torch::fmod(levels, 2) == 0, torch::full_like(levels, 0.5),
                                   torch::zeros_like(levels));
  const auto shift = torch::atanh(offset / half_l);
  return torch::tanh(z + shift) * half_l - offset;
}

QuantizerOutput FiniteScalarQuantizerImpl::quantize(const torch::Tensor& latent) {
  std::vector<std::int64_t> spatial;
  TORCH_CHECK(latent.size(1) == m_options.dim(), "FSQ expects ", m_options.dim(), " channels, got ",
              latent.size(1));
  auto x = toTokens(latent, spatial);
  const std::int64_t batch = x.size(0), tokens = x.size(1), cbs = m_options.num_codebooks();
  const std::int64_t d = static_cast<std::int64_t>(m_options.levels().size());
  if (project_in) x = project_in(x);
  x = x.reshape({batch, tokens, cbs, d});
  const auto bounded = bound(x);
  const auto rounded = torch::round(bounded);
  const auto st = bounded + (rounded - bounded).detach();
  const auto half_width = torch::floor(m_levels.to(x.device()) / 2);
  const auto codes = st / half_width;                              // [-1, 1]
  const auto digits = (rounded + half_width).to(torch::kLong);     // [0, L)
  const auto indices = (digits * m_basis.to(x.device())).sum(-1);  // [B, N, C]
  auto q = codes.reshape({batch, tokens, cbs * d});
  if (project_out) q = project_out(q);
  QuantizerOutput result;
  result.quantized = fromTokens(q, spatial);
  result.indices = indicesFromTokens(indices, batch, spatial, cbs);
  const auto commitment =
      is_training() ? F::mse_loss(bounded, rounded.detach()) : torch::zeros({}, x.options());
  result.terms = {{"commitment", commitment}};
  result.loss = commitment * m_options.commitment_loss_weight();
  return result;
}

torch::Tensor FiniteScalarQuantizerImpl::indicesToCodes(const torch::Tensor& indices) {
  const std::int64_t cbs = m_options.num_codebooks();
  auto idx =
      (cbs == 1 ? indices.unsqueeze(-1) : indices).to(torch::kLong).unsqueeze(-1);  // [B,*S,C,1]
  const auto levels = m_levels.to(idx.device());
  const auto digits =
      torch::remainder(torch::div(idx, m_basis.to(idx.device()), "floor"), levels.to(torch::kLong));
  const auto half_width = torch::floor(levels / 2);
  const auto options =
      project_out ? project_out->weight.options() : torch::TensorOptions().device(idx.device());
  auto codes = ((digits.to(options.dtype()) - half_width) / half_width).flatten(-2);
  if (project_out) codes = project_out(codes);
  std::vector<std::int64_t> perm{0, codes.dim() - 1};
  for (std::int64_t i = 1; i < codes.dim() - 1; ++i) perm.push_back(i);
  return codes.permute(perm).contiguous();
}

// ---------------------------------------------------------------------------------------------
// VQ

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

std::shared_ptr<Quantizer> makeQuantizer(const core::QuantizerConfig& c, std::int64_t dim) {
  auto prefix = [](const std::invalid_argument& e) {
    return std::invalid_argument(std::string("model.quantizer.") + e.what());
  };
  try {
    if (c.type == "lfq") {
      return LookupFreeQuantizer(LookupFreeQuantizerOptions(dim, c.codebook_size)
                                     .num_codebooks(c.num_codebooks)
                                     .entropy_loss_weight(c.entropy_loss_weight)
                                     .commitment_loss_weight(c.commitment_loss_weight)
                                     .diversity_gamma(c.diversity_gamma)
                                     .soft_clamp(c.soft_clamp)
                                     .spherical(c.spherical)
                                     .entropy_estimate(parseEntropyEstimate(c.entropy_estimate)))
          .ptr();
    }
    if (c.type == "fsq") {
      std::vector<std::int64_t> levels(c.fsq_levels.begin(), c.fsq_levels.end());
      return FiniteScalarQuantizer(FiniteScalarQuantizerOptions(dim, levels)
                                       .num_codebooks(c.num_codebooks)
                                       .commitment_loss_weight(c.commitment_loss_weight))
          .ptr();
    }
    if (c.type == "vq") {
      return VectorQuantizer(VectorQuantizerOptions(dim, c.codebook_size, c.codebook_dim)
                                 .beta(c.vq_beta)
                                 .l2_normalize(c.vq_l2_normalize)
                                 .ema(c.vq_ema)
                                 .ema_decay(c.vq_ema_decay)
                                 .dead_code_threshold(c.vq_dead_code_threshold))
          .ptr();
    }
  } catch (const std::invalid_argument& e) {
    throw prefix(e);
  }
  throw std::invalid_argument("model.quantizer.type: unknown quantizer \"" + c.type + "\"");
}

}  // namespace tb::trainer
