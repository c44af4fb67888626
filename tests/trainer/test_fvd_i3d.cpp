// The rFVD I3D port against the reference fixture (shared/fixtures/fid_fvd): weights regenerated
// from the fixture's recipe and checked against i3d_keys.tsv; clip a/3's input frame, its 16
// endpoints and per-step logits; the 400 logits of all 12 clips and rFVD between the two sets,
// each within the fixture's tolerances; and clips the network cannot take.
#include "tests/trainer/fid_fvd_recipe.h"
#include "trainer/cli/metrics_commands.h"
#include "trainer/evaluation/frechet_distance.h"
#include "trainer/evaluation/fvd_i3d.h"
#include "trainer/weights/state_dict_io.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_encoder.h"
#endif

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace tb::trainer {
namespace {

using metrics::FvdI3d;

const std::string kFixture = TB_SHARED_DIR "/fixtures/fid_fvd";
constexpr double kI3dGain = 6.0;

using testing::relativeMax;
using testing::tensorNamed;

bool fixturePresent() { return std::filesystem::exists(kFixture + "/i3d_keys.tsv"); }

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
            testing::kInputTolerance);
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

// `metrics A B --fvd-weights FILE` on two folders of lossless videos (FFV1) holding the
// fixture's clips gives the reference's rFVD; a clip too short for the I3D is named and left out.
TEST(FvdI3dFixture, MetricsOnTwoVideoFoldersPrintsTheReferenceRfvd) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
#if !TB_WITH_FFMPEG
  GTEST_SKIP() << "writing the clips as videos needs a build with FFmpeg";
#else
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tb_fvd_cli_" + std::to_string(::getpid()));
  const weights::NamedTensors clips = weights::loadTensors(kFixture + "/clips.safetensors");
  const auto write = [&](const torch::Tensor& clip, const fs::path& path) {
    media::VideoFrames frames;
    frames.count = static_cast<int>(clip.size(0));
    frames.height = static_cast<int>(clip.size(1));
    frames.width = static_cast<int>(clip.size(2));
    frames.fps = 8;
    const torch::Tensor bytes = clip.contiguous();
    frames.rgb.assign(bytes.data_ptr<std::uint8_t>(),
                      bytes.data_ptr<std::uint8_t>() + bytes.numel());
    media::VideoEncoderOptions lossless;
    lossless.codec = media::VideoCodec::Ffv1;
    media::writeVideo(path.string(), frames, lossless);
  };
  for (const std::string set : {"a", "b"}) {
    fs::create_directories(dir / set);
    for (int k = 0; k < 6; ++k) {
      const torch::Tensor clip = tensorNamed(clips, set + "/" + std::to_string(k));
      write(clip, dir / set / ("clip_" + std::to_string(k) + ".mkv"));
      if (k == 0) write(clip.slice(0, 0, 8), dir / set / "short.mkv");  // 8 frames: too short
    }
  }
  FvdI3d model;
  const std::string weights = (dir / "i3d_pretrained_400.pt").string();
  testing::saveGeneratedWeights(*model, kI3dGain, weights);
  cli::MetricsArgs args;
  args.a = (dir / "a").string();
  args.b = (dir / "b").string();
  args.fvd_weights = weights;
  const auto [code, out, err] = testing::captured([&] { return cli::computeMetrics(args); });
  ASSERT_EQ(code, 0) << err;
  const auto json = nlohmann::json::parse(out);
  EXPECT_EQ(json["pairs"], 7);
  EXPECT_EQ(json["rfvd_samples"], 6);
  EXPECT_EQ(json["rfvd_short_clips"], 1);
  EXPECT_NE(err.find("short.mkv: 8 frames, the I3D needs 9"), std::string::npos) << err;
  const double reference =
      tensorNamed(weights::loadTensors(kFixture + "/expected.safetensors"), "fvd/fd_f64")
          .item<double>();
  EXPECT_LE(std::abs(json["rfvd"].get<double>() - reference) / reference, 1e-4) << out;
  fs::remove_all(dir);
#endif
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
