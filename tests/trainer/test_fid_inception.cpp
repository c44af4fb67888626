// The rFID InceptionV3 port against the reference fixture (shared/fixtures/fid_fvd): the
// fixture's weights regenerated from its recipe (FNV-1a names, splitmix64 streams), checked
// against inception_keys.tsv; the network's input, three block checkpoints, the 2048-d features
// of 16 images and rFID between the two sets, each within the fixture's tolerances; and the
// weight file loader's errors.
#include "tests/trainer/fid_fvd_recipe.h"
#include "trainer/cli/metrics_commands.h"
#include "trainer/evaluation/fid_inception.h"
#include "trainer/evaluation/frechet_distance.h"
#include "trainer/weights/state_dict_io.h"
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using metrics::FidInception;

const std::string kFixture = TB_SHARED_DIR "/fixtures/fid_fvd";
constexpr double kInceptionGain = 8.0;

using testing::relativeMax;
using testing::tensorNamed;

bool fixturePresent() { return fs::exists(kFixture + "/inception_keys.tsv"); }

TEST(FidInceptionFixture, GeneratedWeightsMatchTheKeyTable) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
  FidInception model;
  testing::generateWeights(*model, kInceptionGain);
  testing::expectKeyTable(*model, kFixture + "/inception_keys.tsv", 566);
}

#if TB_WITH_OPENCV
// [1, 3, H, W] in [0, 1] from one of the fixture's PNGs (uint8 / 255, as pytorch-fid reads it).
torch::Tensor image(const std::string& file) {
  const media::VideoFrames frames = media::ImageReader::read(kFixture + "/" + file);
  return torch::from_blob(const_cast<std::uint8_t*>(frames.rgb.data()),
                          {1, frames.height, frames.width, 3}, torch::kUInt8)
             .permute({0, 3, 1, 2})
             .to(torch::kFloat32) /
         255.0;
}

// images.tsv: set, index, file, height, width.
std::vector<std::pair<std::string, std::string>> imageFiles() {
  std::vector<std::pair<std::string, std::string>> files;  // (set, file)
  std::ifstream tsv(kFixture + "/images.tsv");
  std::string line;
  std::getline(tsv, line);
  while (std::getline(tsv, line)) {
    std::istringstream fields(line);
    std::string set, index, file;
    std::getline(fields, set, '\t');
    std::getline(fields, index, '\t');
    std::getline(fields, file, '\t');
    files.emplace_back(set, file);
  }
  return files;
}
#endif

TEST(FidInceptionFixture, FeaturesCheckpointsAndRfidMatchTheReference) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
#if !TB_WITH_OPENCV
  GTEST_SKIP() << "reading the fixture PNGs needs a build with OpenCV";
#else
  FidInception model;
  testing::generateWeights(*model, kInceptionGain);
  const weights::NamedTensors expected = weights::loadTensors(kFixture + "/expected.safetensors");
  const weights::NamedTensors checkpoints =
      weights::loadTensors(kFixture + "/checkpoints.safetensors");

  // Image a3 step by step: the input after resize and 2x - 1, then the blocks' channel means.
  const auto files = imageFiles();
  ASSERT_EQ(files.size(), 16u);
  torch::Tensor x = metrics::FidInceptionImpl::preprocess(image(files[3].second));
  EXPECT_LE((x[0] - tensorNamed(checkpoints, "inception/in299")).abs().max().item<double>(),
            testing::kInputTolerance);
  for (int b = 0; b < 3; ++b) {
    x = model->block(b, x);
    const torch::Tensor chmean = x.mean({0, 2, 3});
    const double error = relativeMax(
        chmean, tensorNamed(checkpoints, "inception/block" + std::to_string(b) + "_chmean"));
    EXPECT_LE(error, 1e-5) << "block " << b;
  }

  // Every image's features, and rFID between the two sets.
  metrics::FeatureStatistics a(2048), b(2048);
  double worst = 0;
  int row_a = 0, row_b = 0;
  for (const auto& [set, file] : files) {
    const torch::Tensor features = model->forward(image(file));
    const std::string key = set == "a" ? "fid/feat_a" : "fid/feat_b";
    const int row = set == "a" ? row_a++ : row_b++;
    const double error = relativeMax(features[0], tensorNamed(expected, key)[row]);
    worst = std::max(worst, error);
    EXPECT_LE(error, 1e-5) << file;
    (set == "a" ? a : b).add(features);
  }
  const double fid = metrics::frechetDistance(a, b);
  const double reference = tensorNamed(expected, "fid/fd").item<double>();
  EXPECT_LE(std::abs(fid - reference) / reference, 1e-4) << fid << " against " << reference;
  std::cout << "FID InceptionV3: worst feature error " << worst << " (tolerance 1e-5), rFID " << fid
            << " against the reference's " << reference << "\n";
#endif
}

// `metrics A B --fid-weights FILE` on two folders holding the fixture's sets under the same
// names gives the reference's rFID, beside the paired scores.
TEST(FidInceptionFixture, MetricsOnTwoImageFoldersPrintsTheReferenceRfid) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
#if !TB_WITH_OPENCV
  GTEST_SKIP() << "reading the fixture PNGs needs a build with OpenCV";
#else
  const fs::path dir = fs::temp_directory_path() / ("tb_fid_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  int index[2] = {0, 0};
  for (const auto& [set, file] : imageFiles()) {
    const int k = index[set == "a" ? 0 : 1]++;
    fs::copy_file(kFixture + "/" + file, dir / set / ("image_" + std::to_string(k) + ".png"));
  }
  FidInception model;
  const std::string weights = (dir / "pt_inception.pth").string();
  testing::saveGeneratedWeights(*model, kInceptionGain, weights);
  cli::MetricsArgs args;
  args.a = (dir / "a").string();
  args.b = (dir / "b").string();
  args.fid_weights = weights;
  const auto [code, out, err] = testing::captured([&] { return cli::computeMetrics(args); });
  ASSERT_EQ(code, 0) << err;
  const auto json = nlohmann::json::parse(out);
  EXPECT_EQ(json["pairs"], 8);
  EXPECT_EQ(json["rfid_samples"], 8);
  const double reference = 305.6650404;  // expected.tsv: fid
  EXPECT_LE(std::abs(json["rfid"].get<double>() - reference) / reference, 1e-4) << out;
  EXPECT_GT(json["psnr"].get<double>(), 10.0) << out;  // blurred, noisy, JPEG copies of set a
  EXPECT_NE(err.find("not more than the 2048 feature dimensions"), std::string::npos) << err;

  // A file on one side only is named; video weights on image folders are refused.
  fs::copy_file(dir / "a" / "image_0.png", dir / "a" / "extra.png");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cli::computeMetrics(args), 2);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("b: no extra.png to pair"),
            std::string::npos);
  fs::remove(dir / "a" / "extra.png");
  args.fid_weights.clear();
  args.fvd_weights = weights;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cli::computeMetrics(args), 2);
  EXPECT_NE(
      ::testing::internal::GetCapturedStderr().find("--fvd-weights: " + args.a + " holds images"),
      std::string::npos);
  fs::remove_all(dir);
#endif
}

TEST(FidInception, AWeightFileOfAnotherNetworkIsRefusedNamingTheKeyAndShapes) {
  const fs::path dir = fs::temp_directory_path() / ("tb_fid_weights_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  FidInception model;
  const torch::Tensor before = model->named_parameters()["Conv2d_1a_3x3.conv.weight"].clone();
  const auto save = [&](const std::string& name,
                        const c10::Dict<std::string, torch::Tensor>& dict) {
    const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
    const fs::path path = dir / name;
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path.string();
  };
  c10::Dict<std::string, torch::Tensor> wrong;
  for (const auto& item : model->named_parameters()) wrong.insert(item.key(), item.value().clone());
  for (const auto& item : model->named_buffers()) wrong.insert(item.key(), item.value().clone());
  wrong.insert_or_assign("Mixed_6b.branch7x7_1.conv.weight", torch::ones({128, 768, 1, 1}));
  wrong.insert_or_assign("Conv2d_1a_3x3.conv.weight", torch::ones({32, 3, 3, 3}));
  wrong.insert_or_assign("Mixed_7c.branch_pool.conv.weight", torch::zeros({192, 2048, 3, 3}));
  const std::string wrong_file = save("wrong.pth", wrong);
  try {
    model->loadWeights(wrong_file);
    FAIL() << "loaded a file with a wrong shape";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(wrong_file), std::string::npos) << what;
    EXPECT_NE(what.find("Mixed_7c.branch_pool.conv.weight has shape [192, 2048, 3, 3], the "
                        "FID InceptionV3 needs [192, 2048, 1, 1]"),
              std::string::npos)
        << what;
  }
  // Nothing was changed by the refused file.
  EXPECT_TRUE(torch::equal(model->named_parameters()["Conv2d_1a_3x3.conv.weight"], before));

  c10::Dict<std::string, torch::Tensor> partial;
  partial.insert("fc.weight", torch::zeros({1008, 2048}));
  try {
    model->loadWeights(save("partial.pth", partial));
    FAIL() << "loaded a file without the convolutions";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing Conv2d_1a_3x3.conv.weight"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(model->loadWeights((dir / "absent.pth").string()), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tb::trainer
