// The Fréchet distance of rFID and rFVD: a closed form every build checks, and the reference
// fixture's rows (shared/fixtures/fid_fvd: pytorch-fid's calculate_frechet_distance and the rFVD
// code's frechet_distance, computed in float64), which must agree to 1e-4 relative.
#include "tests/trainer/fid_fvd_recipe.h"
#include "trainer/evaluation/frechet_distance.h"
#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <stdexcept>
#include <string>

namespace tb::trainer {
namespace {

using metrics::FeatureStatistics;
using metrics::frechetDistance;
using testing::tensorNamed;

const std::string kFixture = TB_SHARED_DIR "/fixtures/fid_fvd";

bool fixturePresent() { return std::filesystem::exists(kFixture + "/math.safetensors"); }

double relative(double value, double reference) {
  return std::abs(value - reference) / std::abs(reference);
}

// Statistics of `rows` fed in uneven batches, as an evaluation feeds them.
FeatureStatistics statisticsInBatches(const torch::Tensor& rows) {
  FeatureStatistics stats(rows.size(1));
  for (std::int64_t start = 0, batch = 1; start < rows.size(0); start += batch, batch += 2)
    stats.add(rows.slice(0, start, std::min(rows.size(0), start + batch)));
  return stats;
}

// Two Gaussians with diagonal covariances: d = |mu1 - mu2|^2 + sum (sqrt(a_i) - sqrt(b_i))^2.
TEST(FrechetDistance, DiagonalCovariancesGiveTheClosedForm) {
  const torch::Tensor mu1 = torch::tensor({0.0, 1.0, -2.0, 0.5}, torch::kFloat64);
  const torch::Tensor mu2 = torch::tensor({0.5, 1.0, 1.0, 0.0}, torch::kFloat64);
  const torch::Tensor a = torch::tensor({1.0, 4.0, 0.25, 9.0}, torch::kFloat64);
  const torch::Tensor b = torch::tensor({4.0, 4.0, 1.0, 0.0}, torch::kFloat64);  // b_4: singular
  const double expected = (mu1 - mu2).square().sum().item<double>() +
                          (a.sqrt() - b.sqrt()).square().sum().item<double>();
  EXPECT_NEAR(frechetDistance(mu1, torch::diag(a), mu2, torch::diag(b)), expected, 1e-12);
  // A rotation of both leaves the distance as it is, but for the square root of rounding noise
  // at b's zero eigenvalue (sqrt(1e-16) = 1e-8).
  const auto [q, r] = torch::linalg_qr(torch::randn({4, 4}, torch::kFloat64));
  const auto rotate = [&q = q](const torch::Tensor& s) { return q.matmul(s).matmul(q.t()); };
  EXPECT_NEAR(
      frechetDistance(q.matmul(mu1), rotate(torch::diag(a)), q.matmul(mu2), rotate(torch::diag(b))),
      expected, 1e-6);
}

TEST(FrechetDistance, StatisticsInBatchesEqualTheWholeSetsAndASetIsAtZeroFromItself) {
  torch::manual_seed(3);
  // Features far from 0, where a sum-of-squares formula would lose digits.
  const torch::Tensor rows = torch::randn({257, 16}, torch::kFloat64) * 0.1 + 1000.0;
  const FeatureStatistics stats = statisticsInBatches(rows);
  EXPECT_EQ(stats.count(), 257);
  EXPECT_TRUE(torch::allclose(stats.mean(), rows.mean(0), 0, 1e-12));
  const torch::Tensor centred = rows - rows.mean(0);
  const torch::Tensor cov = centred.t().matmul(centred) / 256.0;
  EXPECT_LT((stats.covariance() - cov).abs().max().item<double>(), 1e-13);
  EXPECT_NEAR(frechetDistance(stats, stats), 0.0, 1e-9);
}

TEST(FrechetDistance, BadShapesAreNamed) {
  FeatureStatistics stats(8);
  try {
    stats.add(torch::zeros({4, 7}));
    FAIL() << "accepted [4, 7]";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[4, 7], expected [N, 8]"), std::string::npos) << e.what();
  }
  stats.add(torch::zeros({1, 8}));
  EXPECT_THROW(stats.covariance(), std::logic_error);  // one row has no covariance
  EXPECT_THROW(frechetDistance(FeatureStatistics(8), FeatureStatistics(9)), std::invalid_argument);
}

// The fixture's distance-only cases: 500 samples in dimension 64 (full rank) and 20 (rank 19,
// where scipy's sqrtm returns a complex result whose imaginary part pytorch-fid drops).
TEST(FrechetDistanceFixture, MathCasesMatchPytorchFidAndTheRfvdCode) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
  const weights::NamedTensors math = weights::loadTensors(kFixture + "/math.safetensors");
  for (const std::string& set : {std::string("well"), std::string("singular")}) {
    SCOPED_TRACE(set);
    const auto t = [&](const std::string& key) { return tensorNamed(math, set + "/" + key); };
    const FeatureStatistics a = statisticsInBatches(t("x1"));
    const FeatureStatistics b = statisticsInBatches(t("x2"));
    EXPECT_LT((a.mean() - t("mu1")).abs().max().item<double>(), 1e-12);
    EXPECT_LT((a.covariance() - t("sigma1")).abs().max().item<double>(),
              1e-12 * t("sigma1").abs().max().item<double>());
    EXPECT_LT((b.covariance() - t("sigma2")).abs().max().item<double>(),
              1e-12 * t("sigma2").abs().max().item<double>());
    const double fid = t("fid").item<double>();
    const double mine = frechetDistance(t("mu1"), t("sigma1"), t("mu2"), t("sigma2"));
    EXPECT_LT(relative(mine, fid), 1e-4) << mine << " against " << fid;
    EXPECT_LT(relative(frechetDistance(a, b), t("fvd").item<double>()), 1e-4);
    // pytorch-fid's retry: eps 1e-6 on both covariances inside the square root only.
    const double eps = frechetDistance(t("mu1"), t("sigma1"), t("mu2"), t("sigma2"), 1e-6);
    EXPECT_LT(relative(eps, t("fid_eps_forced").item<double>()), 1e-4)
        << eps << " against " << t("fid_eps_forced").item<double>();
    std::cout << set << ": rFID distance " << mine << " (reference " << fid << ", relative "
              << relative(mine, fid) << ")\n";
  }
}

// The network-feature rows: 8 images' InceptionV3 pool3 features (2048-d, so the covariances
// have rank 7) and 6 clips' I3D logits (400-d), from the reference run.
TEST(FrechetDistanceFixture, NetworkFeatureRowsGiveTheReferenceRfidAndRfvd) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
  const weights::NamedTensors expected = weights::loadTensors(kFixture + "/expected.safetensors");
  const auto distance = [&](const std::string& a, const std::string& b) {
    return frechetDistance(statisticsInBatches(tensorNamed(expected, a)),
                           statisticsInBatches(tensorNamed(expected, b)));
  };
  const double fid = tensorNamed(expected, "fid/fd").item<double>();
  const double fvd = tensorNamed(expected, "fvd/fd_f64").item<double>();
  const double my_fid = distance("fid/feat_a", "fid/feat_b");
  const double my_fvd = distance("fvd/logits_a", "fvd/logits_b");
  EXPECT_LT(relative(my_fid, fid), 1e-4) << my_fid << " against " << fid;
  EXPECT_LT(relative(my_fvd, fvd), 1e-4) << my_fvd << " against " << fvd;
  std::cout << std::setprecision(10) << "rFID " << my_fid << " (reference " << fid << ", relative "
            << relative(my_fid, fid) << "), rFVD " << my_fvd << " (reference " << fvd
            << ", relative " << relative(my_fvd, fvd) << ")\n";
}

}  // namespace
}  // namespace tb::trainer
