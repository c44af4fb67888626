// PSNR, SSIM and LPIPS against the reference fixture (shared/fixtures/lpips), and LPIPS weight
// loading, gradients and the VGG layout.
#include "test_support.h"
#include "trainer/evaluation/image_metrics.h"
#include "trainer/evaluation/lpips.h"
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tb::trainer {
namespace {

const std::string kFixture = TB_SHARED_DIR "/fixtures/lpips";

bool fixturePresent() { return std::filesystem::exists(kFixture + "/expected.tsv"); }

/// Writes `tensors` as a torch.save-compatible plain dict.
void saveDict(const std::string& path, const c10::Dict<std::string, torch::Tensor>& tensors) {
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(tensors));
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

/// The backbone and lin tensors of `model` under the keys of torchvision and the lpips package.
void splitStateDict(metrics::Lpips& model, c10::Dict<std::string, torch::Tensor>& backbone,
                    c10::Dict<std::string, torch::Tensor>& lin) {
  for (const auto& item : model->named_parameters()) {
    if (item.key().rfind("features.", 0) == 0) {
      backbone.insert(item.key(), item.value().detach().clone());
    } else {
      lin.insert(item.key() + ".model.1.weight", item.value().detach().clone());
    }
  }
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(MetricsFixture, EveryExpectedRowMatchesWithin1e4) {
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent";
#if !TB_WITH_OPENCV
  GTEST_SKIP() << "reading the fixture PNGs needs a build with OpenCV";
#else
  metrics::Lpips alex = metrics::loadLpips(metrics::LpipsNet::Alex, kFixture + "/alex_backbone.pth",
                                           kFixture + "/alex_lin.pth");
  std::ifstream tsv(kFixture + "/expected.tsv");
  std::string line;
  std::getline(tsv, line);  // header
  int rows = 0;
  double max_lpips = 0, max_psnr = 0, max_ssim = 0;
  while (std::getline(tsv, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string net, img_a, img_b;
    double want_lpips = 0, want_psnr = 0, want_ssim = 0;
    fields >> net >> img_a >> img_b >> want_lpips >> want_psnr >> want_ssim;
    ASSERT_FALSE(fields.fail()) << line;
    ASSERT_EQ(net, "alex") << line;
    const auto a = media::ImageReader::read(kFixture + "/" + img_a);
    const auto b = media::ImageReader::read(kFixture + "/" + img_b);
    const double got_lpips = metrics::lpips(alex, a, b);
    const double got_psnr = metrics::psnr(a, b);
    const double got_ssim = metrics::ssim(a, b);
    EXPECT_NEAR(got_lpips, want_lpips, 1e-4) << img_a << " vs " << img_b;
    EXPECT_NEAR(got_psnr, want_psnr, 1e-4) << img_a << " vs " << img_b;
    EXPECT_NEAR(got_ssim, want_ssim, 1e-4) << img_a << " vs " << img_b;
    max_lpips = std::max(max_lpips, std::abs(got_lpips - want_lpips));
    max_psnr = std::max(max_psnr, std::abs(got_psnr - want_psnr));
    max_ssim = std::max(max_ssim, std::abs(got_ssim - want_ssim));
    ++rows;
  }
  EXPECT_EQ(rows, 3);
  std::cout << "max |diff|: lpips " << max_lpips << ", psnr " << max_psnr << ", ssim " << max_ssim
            << "\n";
#endif
}

TEST(Metrics, IdenticalFramesGivePsnrCapSsimOneLpipsZero) {
  const auto clip = testing::makeClip(48, 40, 3, 8.0);
  EXPECT_EQ(metrics::psnr(clip, clip), metrics::kPsnrMax);
  EXPECT_NEAR(metrics::ssim(clip, clip), 1.0, 1e-12);
  metrics::Lpips model(metrics::LpipsNet::Alex, 7);
  EXPECT_EQ(metrics::lpips(model, clip, clip), 0.0);
}

TEST(Metrics, LpipsPsnrSsimAreSymmetric) {
  const auto a = testing::makeClip(48, 40, 3, 8.0);
  auto b = a;
  for (std::size_t i = 0; i < b.rgb.size(); i += 7) b.rgb[i] = static_cast<uint8_t>(255 - b.rgb[i]);
  metrics::Lpips model(metrics::LpipsNet::Alex, 7);
  const double ab = metrics::lpips(model, a, b);
  EXPECT_GT(ab, 0.0);
  EXPECT_NEAR(metrics::lpips(model, b, a), ab, 1e-6);
  EXPECT_NEAR(metrics::psnr(b, a), metrics::psnr(a, b), 1e-9);
  EXPECT_NEAR(metrics::ssim(b, a), metrics::ssim(a, b), 1e-9);
}

TEST(Metrics, PsnrOfAKnownErrorAndVideoMean) {
  auto a = testing::makeClip(16, 16, 2, 8.0);
  auto b = a;
  // Frame 0: every value off by 5 -> MSE 25; frame 1 identical -> the cap.
  for (std::size_t i = 0; i < a.frameBytes(); ++i)
    b.rgb[i] = static_cast<uint8_t>(a.rgb[i] < 128 ? a.rgb[i] + 5 : a.rgb[i] - 5);
  const double frame0 = 10.0 * std::log10(255.0 * 255.0 / 25.0);
  EXPECT_NEAR(metrics::framePsnr(a.frame(0), b.frame(0), 16, 16), frame0, 1e-12);
  EXPECT_NEAR(metrics::psnr(a, b), (frame0 + metrics::kPsnrMax) / 2, 1e-12);
  EXPECT_LT(metrics::ssim(a, b), 1.0);
}

TEST(Metrics, MismatchedSizesOrCountsThrowInvalidArgument) {
  const auto a = testing::makeClip(32, 24, 2, 8.0);
  EXPECT_THROW(metrics::psnr(a, testing::makeClip(24, 32, 2, 8.0)), std::invalid_argument);
  EXPECT_THROW(metrics::ssim(a, testing::makeClip(32, 24, 3, 8.0)), std::invalid_argument);
  metrics::Lpips model(metrics::LpipsNet::Alex, 0);
  EXPECT_THROW(metrics::lpips(model, a, testing::makeClip(32, 24, 1, 8.0)), std::invalid_argument);
  const auto small = testing::makeClip(30, 40, 1, 8.0);
  EXPECT_THROW(metrics::lpips(model, small, small), std::invalid_argument);  // alex needs >= 31x31
  EXPECT_THROW(metrics::ssim(testing::makeClip(10, 10, 1, 0.0), testing::makeClip(10, 10, 1, 0.0)),
               std::invalid_argument);
}

TEST(Lpips, PickleSavedWeightsLoadBack) {
  testing::TempFolder tmp;
  metrics::Lpips source(metrics::LpipsNet::Alex, 1);
  c10::Dict<std::string, torch::Tensor> backbone, lin;
  splitStateDict(source, backbone, lin);
  EXPECT_EQ(backbone.size(), 10u);
  EXPECT_EQ(lin.size(), 5u);
  saveDict(tmp.file("backbone.pth"), backbone);
  saveDict(tmp.file("lin.pth"), lin);
  const auto read_back =
      torch::pickle_load(torch::pickle_save(c10::IValue(backbone))).toGenericDict();
  EXPECT_EQ(read_back.size(), 10u);

  metrics::Lpips loaded =
      metrics::loadLpips(metrics::LpipsNet::Alex, tmp.file("backbone.pth"), tmp.file("lin.pth"));
  const auto want = source->named_parameters();
  const auto got = loaded->named_parameters();
  ASSERT_EQ(want.size(), got.size());
  for (const auto& item : want) {
    EXPECT_TRUE(torch::equal(item.value(), got[item.key()])) << item.key();
  }
  metrics::Lpips other(metrics::LpipsNet::Alex, 2);
  EXPECT_FALSE(
      torch::equal(other->named_parameters()["features.0.weight"], got["features.0.weight"]));
}

TEST(Lpips, BrokenWeightFilesNameTheFileAndTheKey) {
  testing::TempFolder tmp;
  metrics::Lpips source(metrics::LpipsNet::Alex, 1);
  c10::Dict<std::string, torch::Tensor> backbone, lin;
  splitStateDict(source, backbone, lin);
  saveDict(tmp.file("alex_lin.pth"), lin);

  auto missing = backbone.copy();
  ASSERT_EQ(missing.erase("features.3.weight"), 1u);
  saveDict(tmp.file("alex_backbone.pth"), missing);
  metrics::Lpips target(metrics::LpipsNet::Alex, 3);
  const auto before = target->named_parameters()["features.0.weight"].clone();
  EXPECT_EQ(errorOf([&] {
              target->loadWeights(tmp.file("alex_backbone.pth"), tmp.file("alex_lin.pth"));
            }),
            tmp.file("alex_backbone.pth") + ": missing features.3.weight");
  EXPECT_TRUE(torch::equal(before, target->named_parameters()["features.0.weight"]))
      << "changed on failure";

  auto misshaped = backbone.copy();
  misshaped.insert_or_assign("features.3.weight", torch::zeros({192, 64, 3, 3}));
  saveDict(tmp.file("alex_backbone.pth"), misshaped);
  EXPECT_EQ(errorOf([&] {
              target->loadWeights(tmp.file("alex_backbone.pth"), tmp.file("alex_lin.pth"));
            }),
            tmp.file("alex_backbone.pth") +
                ": features.3.weight has shape [192, 64, 3, 3] but alex needs [192, 64, 5, 5]");

  saveDict(tmp.file("backbone.pth"), backbone);
  auto bad_lin = lin.copy();
  ASSERT_EQ(bad_lin.erase("lin4.model.1.weight"), 1u);
  saveDict(tmp.file("alex_lin.pth"), bad_lin);
  EXPECT_EQ(
      errorOf([&] { target->loadWeights(tmp.file("backbone.pth"), tmp.file("alex_lin.pth")); }),
      tmp.file("alex_lin.pth") + ": missing lin4.model.1.weight");

  // A file that holds a tensor instead of a dict, one that is not a torch.save file, none at all.
  {
    const auto bytes = torch::pickle_save(c10::IValue(torch::zeros({2})));
    std::ofstream(tmp.file("tensor.pth"), std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(tmp.file("garbage.pth")) << "not a zip";
  }
  EXPECT_NE(errorOf([&] {
              target->loadWeights(tmp.file("tensor.pth"), tmp.file("alex_lin.pth"));
            }).find(tmp.file("tensor.pth") + ": expected a dict"),
            std::string::npos);
  EXPECT_EQ(errorOf([&] {
              target->loadWeights(tmp.file("garbage.pth"), tmp.file("alex_lin.pth"));
            }).rfind(tmp.file("garbage.pth") + ": not a torch.save file", 0),
            0u);
  EXPECT_EQ(errorOf([&] { target->loadWeights(tmp.file("absent.pth"), tmp.file("alex_lin.pth")); }),
            tmp.file("absent.pth") + ": cannot open (missing or unreadable)");
}

// /dev/zero was read without end (4.7 GB in 16 s, then std::bad_alloc naming nothing), and a
// folder failed without its name.
TEST(Lpips, AWeightPathThatIsNoRegularFileIsNamedAndNeverRead) {
  testing::TempFolder tmp;
  metrics::Lpips source(metrics::LpipsNet::Alex, 1);
  c10::Dict<std::string, torch::Tensor> backbone, lin;
  splitStateDict(source, backbone, lin);
  saveDict(tmp.file("alex_lin.pth"), lin);
  metrics::Lpips target(metrics::LpipsNet::Alex, 3);
  EXPECT_EQ(errorOf([&] { target->loadWeights("/dev/zero", tmp.file("alex_lin.pth")); }),
            "/dev/zero: is a character device, not a weight file");
  EXPECT_EQ(errorOf([&] { target->loadWeights(tmp.path().string(), tmp.file("alex_lin.pth")); }),
            tmp.path().string() + ": is a directory, not a weight file");
}

TEST(Lpips, GradientFlowsToTheInputsOnly) {
  metrics::Lpips model(metrics::LpipsNet::Alex, 0);
  for (const auto& p : model->parameters()) EXPECT_FALSE(p.requires_grad());
  torch::manual_seed(0);
  const auto x = (torch::rand({2, 3, 64, 64}) * 2 - 1).requires_grad_(true);
  const auto y = torch::rand({2, 3, 64, 64}) * 2 - 1;
  const auto d = model->forward(x, y);
  ASSERT_EQ(d.sizes(), torch::IntArrayRef({2}));
  EXPECT_TRUE((d > 0).all().item<bool>());
  d.sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(torch::isfinite(x.grad()).all().item<bool>());
  EXPECT_GT(x.grad().abs().sum().item<double>(), 0.0);
  // Moving x against the gradient brings it closer to y.
  const auto closer = model->forward((x - 0.02 * x.grad() / x.grad().abs().max()).detach(), y);
  EXPECT_LT(closer.sum().item<double>(), d.sum().item<double>());
}

TEST(Lpips, VggRandomInitTapsHaveTheVggWidths) {
  metrics::Lpips vgg(metrics::LpipsNet::Vgg, 5);
  const auto params = vgg->named_parameters();
  for (int index : {0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28}) {
    EXPECT_TRUE(params.contains("features." + std::to_string(index) + ".weight")) << index;
  }
  EXPECT_EQ(params.size(), 13u * 2 + 5);
  const auto taps = vgg->taps(torch::zeros({1, 3, 32, 32}));
  ASSERT_EQ(taps.size(), 5u);
  const auto widths = metrics::lpipsTapChannels(metrics::LpipsNet::Vgg);
  const int64_t sides[] = {32, 16, 8, 4, 2};
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(taps[k].sizes(), torch::IntArrayRef({1, widths[k], sides[k], sides[k]})) << k;
    EXPECT_EQ(params["lin" + std::to_string(k)].sizes(), torch::IntArrayRef({1, widths[k], 1, 1}))
        << k;
  }
  torch::NoGradGuard no_grad;
  const auto d = vgg->forward(torch::zeros({2, 3, 32, 32}), torch::full({2, 3, 32, 32}, 0.5));
  EXPECT_EQ(d.sizes(), torch::IntArrayRef({2}));
  EXPECT_TRUE(torch::isfinite(d).all().item<bool>());
  EXPECT_THROW(metrics::parseLpipsNet("squeeze"), std::invalid_argument);
}

}  // namespace
}  // namespace tb::trainer
