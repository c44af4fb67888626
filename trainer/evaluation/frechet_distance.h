#pragma once
// The Fréchet distance between two sets of feature vectors, as rFID (pytorch-fid's InceptionV3
// pool3 features) and rFVD (the I3D-400 logits of SEED-Voken / VideoGPT) compute it:
//
//   d = |mu1 - mu2|^2 + tr(sigma1) + tr(sigma2) - 2 tr((sigma1 sigma2)^(1/2))
//
// with mu the mean and sigma the unbiased covariance (divided by N - 1) of each set, all in
// float64. The statistics are accumulated batch by batch, so evaluating 50,000 images holds one
// d x d matrix per set (32 MB at d = 2048), whatever N.
//
// The square-root term: tr((sigma1 sigma2)^(1/2)) = tr((s1 sigma2 s1)^(1/2)) with s1 the
// symmetric square root of sigma1, = the sum of the singular values of s2 s1. Both square roots
// come from symmetric eigendecompositions with rounding-noise negative eigenvalues set to 0, so
// the result is real and finite for any two covariances: pytorch-fid's complex-result check and
// its eps retry (scipy's sqrtm failing) have nothing to catch. On the reference fixture
// (../shared/fixtures/fid_fvd) this agrees with pytorch-fid's scipy sqrtm to 9e-14 (500 samples,
// full rank), 9e-9 (20 samples) and 9e-7 (8 images' 2048-d features) relative, and with the rFVD
// code's SVD square roots to 2e-6 (6 clips' logits); the fixture's tolerance is 1e-4
// (tests/trainer/test_frechet_distance.cpp).

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace tb::trainer::metrics {

/// Mean and covariance of feature vectors, accumulated in float64 batch by batch (Chan et al.'s
/// pairwise update: each batch centred on its own mean, so large offsets cost no precision).
class FeatureStatistics {
 public:
  /// `dim`: the feature length (2048 for InceptionV3 pool3, 400 for I3D logits).
  explicit FeatureStatistics(std::int64_t dim);

  /// Adds the rows of `features` `[N, dim]` (any floating type, any device; copied to the CPU
  /// in float64). Throws std::invalid_argument naming the shape when it is not [N, dim].
  void add(const torch::Tensor& features);

  std::int64_t count() const { return m_count; }
  std::int64_t dim() const { return m_dim; }
  /// `[dim]` float64; zeros before any row.
  const torch::Tensor& mean() const { return m_mean; }
  /// `[dim, dim]` float64, divided by count - 1 (numpy's np.cov(rowvar=False)). Throws
  /// std::logic_error with fewer than 2 rows.
  torch::Tensor covariance() const;

  /// Writes the statistics (count, mean, scatter, float64) to a safetensors file, atomically,
  /// with string metadata.
  void save(const std::filesystem::path& file,
            const std::map<std::string, std::string>& metadata) const;
  /// Statistics saved by save(). Throws std::runtime_error naming the file when it is not such a
  /// file or its dimension is not `dim`.
  static FeatureStatistics load(const std::filesystem::path& file, std::int64_t dim);

 private:
  std::int64_t m_dim;
  std::int64_t m_count = 0;
  torch::Tensor m_mean;     // [dim] float64
  torch::Tensor m_scatter;  // [dim, dim] float64: sum of (x - mean)(x - mean)^T
};

/// d above from two sets' statistics (float64). `offset` > 0 adds offset x I to both
/// covariances inside the square-root term only, as pytorch-fid's retry does (eps 1e-6); 0 is
/// what every published figure uses. Throws std::invalid_argument when the shapes disagree.
double frechetDistance(const torch::Tensor& mean1, const torch::Tensor& covariance1,
                       const torch::Tensor& mean2, const torch::Tensor& covariance2,
                       double offset = 0.0);

/// The same from two FeatureStatistics of equal dim, each with at least 2 rows.
double frechetDistance(const FeatureStatistics& a, const FeatureStatistics& b);

}  // namespace tb::trainer::metrics
