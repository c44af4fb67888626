#include "trainer/evaluation/frechet_distance.h"
#include "trainer/weights/state_dict_io.h"

#include <stdexcept>
#include <string>

namespace tb::trainer::metrics {
namespace {

// The symmetric square root of a covariance: Q diag(sqrt(max(lambda, 0))) Q^T, its negative
// rounding-noise eigenvalues taken as 0.
torch::Tensor symmetricSquareRoot(const torch::Tensor& covariance) {
  const auto [eigenvalues, eigenvectors] = torch::linalg_eigh(covariance, "L");
  return torch::matmul(eigenvectors * eigenvalues.clamp_min(0).sqrt().unsqueeze(0),
                       eigenvectors.transpose(0, 1));
}

}  // namespace

FeatureStatistics::FeatureStatistics(std::int64_t dim)
    : m_dim(dim),
      m_mean(torch::zeros({dim}, torch::kFloat64)),
      m_scatter(torch::zeros({dim, dim}, torch::kFloat64)) {
  if (dim < 1) throw std::invalid_argument("feature statistics: dimension " + std::to_string(dim));
}

void FeatureStatistics::add(const torch::Tensor& features) {
  if (features.dim() != 2 || features.size(1) != m_dim) {
    throw std::invalid_argument("feature statistics: features of shape " +
                                weights::shapeText(features.sizes()) + ", expected [N, " +
                                std::to_string(m_dim) + "]");
  }
  const std::int64_t n = features.size(0);
  if (n == 0) return;
  const torch::Tensor x = features.detach().to(torch::kCPU, torch::kFloat64);
  const torch::Tensor batch_mean = x.mean(0);
  const torch::Tensor centred = x - batch_mean;
  const torch::Tensor batch_scatter = torch::matmul(centred.transpose(0, 1), centred);
  const std::int64_t total = m_count + n;
  const torch::Tensor delta = batch_mean - m_mean;
  const double weight =
      static_cast<double>(m_count) * static_cast<double>(n) / static_cast<double>(total);
  m_scatter += batch_scatter + torch::outer(delta, delta) * weight;
  m_mean += delta * (static_cast<double>(n) / static_cast<double>(total));
  m_count = total;
}

void FeatureStatistics::save(const std::filesystem::path& file,
                             const std::map<std::string, std::string>& metadata) const {
  weights::saveTensors({{"count", torch::tensor({m_count}, torch::kInt64)},
                        {"mean", m_mean},
                        {"scatter", m_scatter}},
                       file, metadata);
}

FeatureStatistics FeatureStatistics::load(const std::filesystem::path& file, std::int64_t dim) {
  FeatureStatistics out(dim);
  const weights::NamedTensors tensors = weights::loadTensors(file);
  const auto named = [&](const char* name) {
    for (const auto& [key, t] : tensors)
      if (key == name) return t;
    throw std::runtime_error(file.string() + ": no tensor \"" + name + "\" (not saved statistics)");
  };
  const torch::Tensor count = named("count"), mean = named("mean"), scatter = named("scatter");
  if (count.numel() != 1 || mean.sizes() != torch::IntArrayRef{dim} ||
      scatter.sizes() != torch::IntArrayRef{dim, dim} || mean.scalar_type() != torch::kFloat64 ||
      scatter.scalar_type() != torch::kFloat64) {
    throw std::runtime_error(file.string() + ": statistics of mean " +
                             weights::shapeText(mean.sizes()) + ", expected float64 [" +
                             std::to_string(dim) + "]");
  }
  out.m_count = count.to(torch::kInt64).item<std::int64_t>();
  out.m_mean = mean;
  out.m_scatter = scatter;
  return out;
}

torch::Tensor FeatureStatistics::covariance() const {
  if (m_count < 2) {
    throw std::logic_error("feature statistics: a covariance needs 2 rows, there are " +
                           std::to_string(m_count));
  }
  return m_scatter / static_cast<double>(m_count - 1);
}

double frechetDistance(const torch::Tensor& mean1, const torch::Tensor& covariance1,
                       const torch::Tensor& mean2, const torch::Tensor& covariance2,
                       double offset) {
  const std::int64_t d = mean1.numel();
  for (const torch::Tensor* t : {&mean1, &mean2}) {
    if (t->dim() != 1 || t->size(0) != d)
      throw std::invalid_argument("Frechet distance: means of shapes " +
                                  weights::shapeText(mean1.sizes()) + " and " +
                                  weights::shapeText(mean2.sizes()));
  }
  for (const torch::Tensor* t : {&covariance1, &covariance2}) {
    if (t->dim() != 2 || t->size(0) != d || t->size(1) != d)
      throw std::invalid_argument("Frechet distance: covariance of shape " +
                                  weights::shapeText(t->sizes()) + " for means of " +
                                  std::to_string(d));
  }
  const auto f64 = [](const torch::Tensor& t) { return t.to(torch::kCPU, torch::kFloat64); };
  const torch::Tensor m1 = f64(mean1), m2 = f64(mean2);
  torch::Tensor s1 = f64(covariance1), s2 = f64(covariance2);
  const double traces = s1.trace().item<double>() + s2.trace().item<double>();
  if (offset > 0) {
    const torch::Tensor shift = torch::eye(d, torch::kFloat64) * offset;
    s1 = s1 + shift;
    s2 = s2 + shift;
  }
  // tr((s1 s2)^(1/2)) = tr((r1 s2 r1)^(1/2)), r1 = s1^(1/2): the eigenvalues of a symmetric
  // positive semi-definite matrix, rounding noise below 0 taken as 0.
  const torch::Tensor r1 = symmetricSquareRoot(s1);
  torch::Tensor inner = torch::matmul(torch::matmul(r1, s2), r1);
  inner = (inner + inner.transpose(0, 1)) * 0.5;
  const double root_trace =
      torch::linalg_eigvalsh(inner, "L").clamp_min(0).sqrt().sum().item<double>();
  return (m1 - m2).square().sum().item<double>() + traces - 2.0 * root_trace;
}

double frechetDistance(const FeatureStatistics& a, const FeatureStatistics& b) {
  if (a.dim() != b.dim()) {
    throw std::invalid_argument("Frechet distance: features of " + std::to_string(a.dim()) +
                                " and " + std::to_string(b.dim()) + " values");
  }
  return frechetDistance(a.mean(), a.covariance(), b.mean(), b.covariance());
}

}  // namespace tb::trainer::metrics
