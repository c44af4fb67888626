// Tensor <-> safetensors conversion and module state dicts.
#include "trainer/models/lookup_free_quantizer.h"
#include "trainer/models/vector_quantizer.h"
#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace tb::trainer {
namespace {

std::filesystem::path tempFile(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("tb_weights_" + std::to_string(::getpid()) + "_" + name);
}

TEST(Weights, TensorRoundTripIsBitExactForEveryDtype) {
  torch::manual_seed(0);
  weights::NamedTensors tensors;
  const auto base = torch::randn({3, 5}) * 100;
  tensors.emplace_back("f64", base.to(torch::kFloat64));
  tensors.emplace_back("f32", base);
  tensors.emplace_back("f16", base.to(torch::kFloat16));
  tensors.emplace_back("bf16", base.to(torch::kBFloat16));
  tensors.emplace_back("i64", base.to(torch::kInt64) * static_cast<std::int64_t>(1000000007));
  tensors.emplace_back("i32", base.to(torch::kInt32));
  tensors.emplace_back("i16", base.to(torch::kInt16));
  tensors.emplace_back("i8", base.clamp(-100, 100).to(torch::kInt8));
  tensors.emplace_back("u8", base.abs().clamp_max(255).to(torch::kUInt8));
  tensors.emplace_back("bool", base > 0);
  tensors.emplace_back("scalar", torch::tensor(3.5));
  tensors.emplace_back("empty", torch::zeros({0, 4}));
  tensors.emplace_back("strided", base.t());  // non-contiguous input
  tensors.emplace_back("nan", torch::tensor({std::nanf(""), -0.0f, INFINITY}));
  const auto path = tempFile("dtypes.safetensors");
  weights::saveTensors(tensors, path, {{"note", "round trip"}});
  const auto loaded = weights::loadTensors(path);
  ASSERT_EQ(loaded.size(), tensors.size());
  for (const auto& [name, original] : tensors) {
    SCOPED_TRACE(name);
    auto it =
        std::find_if(loaded.begin(), loaded.end(), [&](const auto& p) { return p.first == name; });
    ASSERT_NE(it, loaded.end());
    EXPECT_EQ(it->second.scalar_type(), original.scalar_type());
    EXPECT_EQ(it->second.sizes(), original.sizes());
    const auto a = original.contiguous();
    const auto b = it->second;
    ASSERT_EQ(a.numel() * a.element_size(), b.numel() * b.element_size());
    EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(),
                          static_cast<std::size_t>(a.numel() * a.element_size())),
              0);
  }
  EXPECT_EQ(core::SafetensorsFile::read(path).metadata().at("note"), "round trip");
  std::filesystem::remove(path);
}

TEST(Weights, StateDictSavesParametersAndBuffersAndLoadsThemBack) {
  torch::manual_seed(0);
  VectorQuantizer a(VectorQuantizerOptions(6, 8, 4));
  VectorQuantizer b(VectorQuantizerOptions(6, 8, 4));
  const auto names = weights::stateDict(*a);
  std::vector<std::string> keys;
  for (const auto& [n, t] : names) keys.push_back(n);
  EXPECT_NE(std::find(keys.begin(), keys.end(), "embedding.weight"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), "ema_cluster_size"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), "project_in.weight"), keys.end());
  const auto path = tempFile("vq.safetensors");
  weights::saveStateDict(*a, path);
  EXPECT_FALSE(torch::equal(a->embedding->weight, b->embedding->weight));
  const auto report = weights::loadStateDict(*b, path);
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.unexpected.empty());
  const auto sa = weights::stateDict(*a), sb = weights::stateDict(*b);
  for (std::size_t i = 0; i < sa.size(); ++i)
    EXPECT_TRUE(torch::equal(sa[i].second, sb[i].second)) << sa[i].first;
  EXPECT_TRUE(b->embedding->weight.requires_grad());  // loading keeps parameters trainable
  std::filesystem::remove(path);
}

TEST(Weights, MismatchesNameTheTensorAndTheFile) {
  LookupFreeQuantizer small(LookupFreeQuantizerOptions(8, 16));
  LookupFreeQuantizer wide(LookupFreeQuantizerOptions(12, 16));
  const auto path = tempFile("lfq.safetensors");
  weights::saveStateDict(*small, path);
  try {
    weights::loadStateDict(*wide, path);
    FAIL() << "no error";
  } catch (const weights::WeightsError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find("project_in.weight"), std::string::npos) << what;
    EXPECT_NE(what.find("[4, 8]"), std::string::npos) << what;
    EXPECT_NE(what.find("[4, 12]"), std::string::npos) << what;
  }
  // dtype mismatch
  weights::saveTensors({{"project_in.weight", small->project_in->weight.to(torch::kFloat64)},
                        {"project_in.bias", small->project_in->bias},
                        {"project_out.weight", small->project_out->weight},
                        {"project_out.bias", small->project_out->bias}},
                       path);
  try {
    weights::loadStateDict(*small, path);
    FAIL() << "no error";
  } catch (const weights::WeightsError& e) {
    EXPECT_NE(std::string(e.what()).find("dtype F64"), std::string::npos) << e.what();
  }
  // missing and unexpected names: strict throws, non-strict reports
  weights::saveTensors(
      {{"project_in.weight", small->project_in->weight}, {"extra", torch::zeros({1})}}, path);
  EXPECT_THROW(weights::loadStateDict(*small, path), weights::WeightsError);
  const auto report = weights::loadStateDict(*small, path, /*strict=*/false);
  EXPECT_EQ(report.unexpected, std::vector<std::string>{"extra"});
  EXPECT_EQ(report.missing.size(), 3u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tb::trainer
