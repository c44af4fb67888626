#pragma once
// The fid_fvd fixture's weight recipe (shared/fixtures/fid_fvd/README.md, "Generated weights"):
// every tensor of a reference network from a splitmix64 stream seeded by the fixture seed and
// the FNV-1a hash of the tensor's name, so tests rebuild the networks without weight files.

#include "trainer/torch_compat_version.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer::testing {

/// The fixture's tolerance for the networks' inputs (values in [-1, 1]) is 1e-6, met with
/// Debian's LibTorch 1.13, whose bilinear kernel the reference run used. LibTorch 2.x's CPU kernel
/// rounds differently: measured 5.1e-6 (Inception, 48x80 -> 299) and 2.9e-6 (I3D, 40x72 -> 224)
/// with 2.11; the features and distances downstream still meet their own tolerances.
constexpr double kInputTolerance = TB_TORCH_AT_LEAST(2, 0) ? 1e-5 : 1e-6;

/// The fixture's seed S.
constexpr std::uint64_t kFidFvdSeed = 0x243f6a8885a308d3ULL;

inline std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// The recipe's value stream for one tensor: splitmix64 from seed ^ fnv1a64(name), each value in
// [-1, 1).
class Stream {
 public:
  explicit Stream(const std::string& name) : m_x(kFidFvdSeed ^ fnv1a64(name)) {}
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
inline torch::Tensor generated(const std::string& name, torch::IntArrayRef shape, double gain) {
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
inline void generateWeights(torch::nn::Module& model, double gain) {
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters())
    item.value().copy_(generated(item.key(), item.value().sizes(), gain));
  for (auto& item : model.named_buffers())
    item.value().copy_(generated(item.key(), item.value().sizes(), gain));
}

// The recipe's weights of `model` as a torch.save file at `path` (a dict of tensors under the
// reference's keys), as the weight file users have would be.
inline void saveGeneratedWeights(torch::nn::Module& model, double gain, const std::string& path) {
  generateWeights(model, gain);
  c10::Dict<std::string, torch::Tensor> dict;
  for (const auto& item : model.named_parameters()) dict.insert(item.key(), item.value());
  for (const auto& item : model.named_buffers()) dict.insert(item.key(), item.value());
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The tensor `name` of a fixture file (a test failure, and zeros, when it is absent).
inline torch::Tensor tensorNamed(const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                                 const std::string& name) {
  for (const auto& [key, value] : tensors) {
    if (key == name) return value;
  }
  ADD_FAILURE() << "no tensor " << name;
  return torch::zeros({1});
}

// max|a - b| / max|b|: the fixture's measure for feature vectors, logits and checkpoints.
inline double relativeMax(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>() /
         b.to(torch::kFloat64).abs().max().item<double>();
}

// What a command wrote: its exit code, stdout and stderr.
struct Captured {
  int code = 0;
  std::string out, err;
};

// Runs `command` (a CLI entry point such as cli::computeMetrics) with stdout and stderr captured.
inline Captured captured(const std::function<int()>& command) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Captured result;
  result.code = command();
  result.out = ::testing::internal::GetCapturedStdout();
  result.err = ::testing::internal::GetCapturedStderr();
  return result;
}

// Every state_dict entry of `model` against the fixture's key table (`tsv`: index, key, shape,
// dtype, float64 sum, first value): the same keys, `rows` of them, each sum within 1e-12 and each
// first value exact in float32.
inline void expectKeyTable(torch::nn::Module& model, const std::string& tsv_path, int rows) {
  std::map<std::string, torch::Tensor> mine;
  for (const auto& item : model.named_parameters()) mine[item.key()] = item.value();
  for (const auto& item : model.named_buffers()) mine[item.key()] = item.value();
  std::ifstream tsv(tsv_path);
  std::string line;
  std::getline(tsv, line);  // header
  int seen = 0;
  while (std::getline(tsv, line)) {
    std::istringstream fields(line);
    std::string index, key, shape, dtype, sum, first;
    for (std::string* field : {&index, &key, &shape, &dtype, &sum, &first})
      std::getline(fields, *field, '\t');
    ++seen;
    ASSERT_TRUE(mine.count(key)) << "the network has no " << key;
    const torch::Tensor t = mine[key];
    const double reference = std::stod(sum);
    const double total = t.to(torch::kFloat64).sum().item<double>();
    EXPECT_LE(std::abs(total - reference), 1e-12 * std::max(1.0, std::abs(reference))) << key;
    if (t.scalar_type() == torch::kFloat32) {
      EXPECT_EQ(t.flatten()[0].item<float>(), std::stof(first)) << key;
    }
  }
  EXPECT_EQ(seen, rows);
  EXPECT_EQ(static_cast<int>(mine.size()), rows);  // nothing more, nothing less
}

}  // namespace tb::trainer::testing
