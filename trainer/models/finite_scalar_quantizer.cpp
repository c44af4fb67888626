// Finite scalar quantization: each channel rounded to one of a few levels.
#include "trainer/models/finite_scalar_quantizer.h"

#include "trainer/models/quantizer_tokens.h"

namespace tb::trainer {
namespace F = torch::nn::functional;
using quantizer_tokens::fromTokens;
using quantizer_tokens::indicesFromTokens;
using quantizer_tokens::require;
using quantizer_tokens::toTokens;

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

torch::Tensor FiniteScalarQuantizerImpl::levelEntropy(const torch::Tensor& bounded) const {
  constexpr double kTemperature = 0.25;  // squared distance in levels: soft near the midpoints
  const auto x = bounded.to(torch::kFloat);
  const std::int64_t cbs = x.size(2);
  std::vector<torch::Tensor> means;  // per dimension: [C, L] mean soft assignment to its levels
  for (std::size_t i = 0; i < m_options.levels().size(); ++i) {
    const std::int64_t n = m_options.levels()[i];
    const auto values = torch::arange(n, x.options()) - static_cast<double>(n / 2);
    const auto distance =
        (x.select(-1, static_cast<std::int64_t>(i)).unsqueeze(-1) - values).pow(2);
    means.push_back(torch::softmax(-distance / kTemperature, -1).reshape({-1, cbs, n}).mean(0));
  }
  // One reduction over the ranks for every dimension's levels.
  const auto global =
      globalBatchMean(torch::cat(means, -1)).split_with_sizes(m_options.levels(), -1);
  auto total = torch::zeros({}, x.options());
  for (std::size_t i = 0; i < global.size(); ++i) {
    const auto& mean = global[i];
    const auto entropy = -(mean * torch::log(mean.clamp_min(1e-12))).sum(-1).mean();
    total = total + entropy / std::log(static_cast<double>(m_options.levels()[i]));
  }
  return total / static_cast<double>(global.size());
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
  const bool training = is_training();
  const auto commitment =
      training ? F::mse_loss(bounded, rounded.detach()) : torch::zeros({}, x.options());
  const auto level_entropy = training ? levelEntropy(bounded) : torch::zeros({}, x.options());
  result.terms = {{"commitment", commitment}, {"level_entropy", level_entropy}};
  result.loss = commitment * m_options.commitment_loss_weight();
  if (training && m_options.entropy_loss_weight() > 0)
    result.loss = result.loss + (1 - level_entropy) * m_options.entropy_loss_weight();
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

}  // namespace tb::trainer
