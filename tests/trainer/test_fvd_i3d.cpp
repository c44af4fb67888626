// The rFVD I3D port against the reference fixture (shared/fixtures/fid_fvd): weights regenerated
// from the fixture's recipe and checked against i3d_keys.tsv; clip a/3's input frame, its 16
// endpoints and per-step logits; the 400 logits of all 12 clips and rFVD between the two sets,
// each within the fixture's tolerances; and clips the network cannot take.
#include "tests/trainer/fid_fvd_recipe.h"
#include "trainer/evaluation/frechet_distance.h"
#include "trainer/evaluation/fvd_i3d.h"
#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

namespace tb::trainer {
namespace {

using metrics::FvdI3d;

const std::string kFixture = TB_SHARED_DIR "/fixtures/fid_fvd";
constexpr double kI3dGain = 6.0;

bool fixturePresent() { return std::filesystem::exists(kFixture + "/i3d_keys.tsv"); }

torch::Tensor tensorNamed(const weights::NamedTensors& tensors, const std::string& name) {
  for (const auto& [key, value] : tensors) {
    if (key == name) return value;
  }
  ADD_FAILURE() << "no tensor " << name;
  return torch::zeros({1});
}

double relativeMax(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>() /
         b.to(torch::kFloat64).abs().max().item<double>();
}

TEST(FvdI3dFixture, GeneratedWeightsMatchTheKeyTable) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
  FvdI3d model;
  testing::generateWeights(*model, kI3dGain);
  testing::expectKeyTable(*model, kFixture + "/i3d_keys.tsv", 344);
}

TEST(FvdI3dFixture, EndpointsLogitsAndRfvdMatchTheReference) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
  FvdI3d model;
  testing::generateWeights(*model, kI3dGain);
  const weights::NamedTensors clips = weights::loadTensors(kFixture + "/clips.safetensors");
  const weights::NamedTensors expected = weights::loadTensors(kFixture + "/expected.safetensors");
  const weights::NamedTensors checkpoints =
      weights::loadTensors(kFixture + "/checkpoints.safetensors");

  // Clip a/3 (40x72 frames, stretched to 224x224) step by step.
  const torch::Tensor input =
      metrics::FvdI3dImpl::preprocess(tensorNamed(clips, "a/3").unsqueeze(0));
  EXPECT_LE((input[0].select(1, 0) - tensorNamed(checkpoints, "i3d/in224_frame0"))
                .abs()
                .max()
                .item<double>(),
            1e-6);
  const auto endpoints = model->endpoints(input);
  ASSERT_EQ(endpoints.size(), 17u);
  for (const auto& [name, value] : endpoints) {
    if (name == "logits_per_t") {
      EXPECT_LE(relativeMax(value[0], tensorNamed(checkpoints, "i3d/logits_per_t")), 1e-5) << name;
    } else {
      EXPECT_LE(relativeMax(value[0].mean({1, 2, 3}),
                            tensorNamed(checkpoints, "i3d/" + name + "_chmean")),
                1e-5)
          << name;
    }
  }

  // The logits of every clip, and rFVD between the sets.
  metrics::FeatureStatistics a(400), b(400);
  double worst = 0;
  for (const std::string set : {"a", "b"}) {
    const torch::Tensor reference = tensorNamed(expected, "fvd/logits_" + set);
    for (int k = 0; k < 6; ++k) {
      const torch::Tensor logits =
          model->forward(tensorNamed(clips, set + "/" + std::to_string(k)).unsqueeze(0));
      const double error = relativeMax(logits[0], reference[k]);
      worst = std::max(worst, error);
      EXPECT_LE(error, 1e-5) << set << "/" << k;
      (set == "a" ? a : b).add(logits);
    }
  }
  const double fvd = metrics::frechetDistance(a, b);
  const double fvd_reference = tensorNamed(expected, "fvd/fd_f64").item<double>();
  EXPECT_LE(std::abs(fvd - fvd_reference) / fvd_reference, 1e-4)
      << fvd << " against " << fvd_reference;
  std::cout << "FVD I3D: worst logit error " << worst << " (tolerance 1e-5), rFVD " << fvd
            << " against the reference's " << fvd_reference << "\n";
}

TEST(FvdI3d, ClipsItCannotTakeAreRefusedNamingTheShape) {
  const auto message = [](const torch::Tensor& clips) {
    try {
      metrics::FvdI3dImpl::preprocess(clips);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message(torch::zeros({1, 8, 16, 16, 3}, torch::kUInt8)).find("8 frames"),
            std::string::npos);
  EXPECT_NE(message(torch::zeros({1, 9, 16, 16, 3}, torch::kFloat32)).find("expected uint8"),
            std::string::npos);
  EXPECT_NE(message(torch::zeros({9, 16, 16, 3}, torch::kUInt8)).find("[9, 16, 16, 3]"),
            std::string::npos);
  EXPECT_EQ(metrics::FvdI3dImpl::preprocess(torch::zeros({2, 9, 16, 20, 3}, torch::kUInt8)).sizes(),
            (std::vector<int64_t>{2, 3, 9, 224, 224}));
}

}  // namespace
}  // namespace tb::trainer
