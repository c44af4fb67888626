// Lookup-free quantization (MAGVIT-v2): codes are sign patterns; entropy terms exact or factorised.
#include "trainer/models/lookup_free_quantizer.h"

#include "trainer/models/quantizer_tokens.h"

#include <cmath>

namespace tb::trainer {
namespace F = torch::nn::functional;
using quantizer_tokens::fromTokens;
using quantizer_tokens::indicesFromTokens;
using quantizer_tokens::require;
using quantizer_tokens::toTokens;

namespace {

torch::Tensor entropyOf(const torch::Tensor& prob) {  // reference: log clamped at 1e-5
  return (-prob * prob.clamp_min(1e-5).log()).sum(-1);
}

bool isPowerOfTwo(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

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

}  // namespace tb::trainer
