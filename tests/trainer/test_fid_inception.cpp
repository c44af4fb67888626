// The rFID InceptionV3 port against the reference fixture (shared/fixtures/fid_fvd): the
// fixture's weights regenerated from its recipe (FNV-1a names, splitmix64 streams), checked
// against inception_keys.tsv; the network's input, three block checkpoints, the 2048-d features
// of 16 images and rFID between the two sets, each within the fixture's tolerances; and the
// weight file loader's errors.
#include "trainer/evaluation/fid_inception.h"
#include "trainer/evaluation/frechet_distance.h"
#include "trainer/weights/state_dict_io.h"
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif

#include <gtest/gtest.h>

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
constexpr std::uint64_t kSeed = 0x243f6a8885a308d3ULL;
constexpr double kInceptionGain = 8.0;

bool fixturePresent() { return fs::exists(kFixture + "/inception_keys.tsv"); }

std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// The recipe's value stream for one tensor: splitmix64 from seed ^ fnv1a64(name), each value in
// [-1, 1).
class Stream {
 public:
  explicit Stream(const std::string& name) : m_x(kSeed ^ fnv1a64(name)) {}
  double next() {
    m_x += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = m_x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * std::ldexp(1.0, -52) - 1.0;
  }

 private:
  std::uint64_t m_x;
};

// The generated value of every element of the tensor `name` (float32 after one rounding).
torch::Tensor generated(const std::string& name, torch::IntArrayRef shape, double gain) {
  const auto last_dot = name.rfind('.');
  const std::string leaf = name.substr(last_dot + 1);
  const std::string owner = name.substr(0, last_dot);
  const bool batch_norm = owner.size() >= 3 && owner.compare(owner.size() - 3, 3, ".bn") == 0;
  if (leaf == "num_batches_tracked") return torch::zeros({}, torch::kInt64);
  std::int64_t fan_in = shape.size() >= 2 ? shape[1] : 1;
  for (std::size_t i = 2; i < shape.size(); ++i) fan_in *= shape[i];
  torch::Tensor out = torch::empty(shape, torch::kFloat32);
  float* data = out.data_ptr<float>();
  Stream stream(name);
  for (std::int64_t k = 0; k < out.numel(); ++k) {
    const double v = stream.next();
    double value = 0;
    if (batch_norm) {
      value = leaf == "weight"        ? 1 + 0.1 * v
              : leaf == "running_var" ? 1 + 0.5 * std::abs(v)
                                      : 0.1 * v;  // bias, running_mean
    } else if (leaf == "weight" && shape.size() >= 2) {
      value = std::sqrt(gain / static_cast<double>(fan_in)) * v;
    } else {
      value = 0.01 * v;  // a conv or linear bias
    }
    data[k] = static_cast<float>(value);
  }
  return out;
}

// Fills every parameter and buffer of `model` from the recipe.
void generateWeights(torch::nn::Module& model, double gain) {
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters())
    item.value().copy_(generated(item.key(), item.value().sizes(), gain));
  for (auto& item : model.named_buffers())
    item.value().copy_(generated(item.key(), item.value().sizes(), gain));
}

torch::Tensor tensorNamed(const weights::NamedTensors& tensors, const std::string& name) {
  for (const auto& [key, value] : tensors) {
    if (key == name) return value;
  }
  ADD_FAILURE() << "no tensor " << name;
  return torch::zeros({1});
}

// max|a - b| / max|b|, per the fixture's tolerance for feature vectors.
double relativeMax(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>() /
         b.to(torch::kFloat64).abs().max().item<double>();
}

TEST(FidInceptionFixture, GeneratedWeightsMatchTheKeyTable) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
  FidInception model;
  generateWeights(*model, kInceptionGain);
  std::map<std::string, torch::Tensor> mine;
  for (const auto& item : model->named_parameters()) mine[item.key()] = item.value();
  for (const auto& item : model->named_buffers()) mine[item.key()] = item.value();
  std::ifstream tsv(kFixture + "/inception_keys.tsv");
  std::string line;
  std::getline(tsv, line);  // header
  int rows = 0;
  while (std::getline(tsv, line)) {
    std::istringstream fields(line);
    std::string index, key, shape, dtype, sum, first;
    std::getline(fields, index, '\t');
    std::getline(fields, key, '\t');
    std::getline(fields, shape, '\t');
    std::getline(fields, dtype, '\t');
    std::getline(fields, sum, '\t');
    std::getline(fields, first, '\t');
    ++rows;
    ASSERT_TRUE(mine.count(key)) << "the network has no " << key;
    const torch::Tensor t = mine[key];
    const double reference = std::stod(sum);
    const double total = t.to(torch::kFloat64).sum().item<double>();
    EXPECT_LE(std::abs(total - reference), 1e-12 * std::max(1.0, std::abs(reference))) << key;
    if (t.scalar_type() == torch::kFloat32) {
      EXPECT_EQ(t.flatten()[0].item<float>(), std::stof(first)) << key;
    }
  }
  EXPECT_EQ(rows, 566);
  EXPECT_EQ(static_cast<int>(mine.size()), 566);  // nothing more, nothing less
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
  generateWeights(*model, kInceptionGain);
  const weights::NamedTensors expected = weights::loadTensors(kFixture + "/expected.safetensors");
  const weights::NamedTensors checkpoints =
      weights::loadTensors(kFixture + "/checkpoints.safetensors");

  // Image a3 step by step: the input after resize and 2x - 1, then the blocks' channel means.
  const auto files = imageFiles();
  ASSERT_EQ(files.size(), 16u);
  torch::Tensor x = metrics::FidInceptionImpl::preprocess(image(files[3].second));
  EXPECT_LE((x[0] - tensorNamed(checkpoints, "inception/in299")).abs().max().item<double>(), 1e-6);
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
                        "network needs [192, 2048, 1, 1]"),
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
