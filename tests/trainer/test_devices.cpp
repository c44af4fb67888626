// Devices and mixed precision, as far as a CPU-only build can check them: which device and c10d
// backend a configuration asks for (and the errors that name train.device / distributed.backend),
// the dynamic loss scaler with forced infinities, and loss scaling inside real training runs.
// The CUDA half is tests/cuda (label `cuda`), run on a GPU machine by scripts/gpu-check.sh.
#include "core/config_io.h"
#include "core/metrics_log.h"
#include "tests/trainer/test_support.h"
#include "trainer/cpu_features.h"
#include "trainer/models/magvit_blocks.h"
#include "trainer/models/tokenizer.h"
#include "trainer/torch_compat.h"
#include "trainer/training/loss_scaler.h"
#include "trainer/training/training_step.h"
#include "trainer/training_device.h"
#include "trainer/weights/state_dict_io.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using testing::TempFolder;

// --- LossScaler ---------------------------------------------------------------------------

torch::Tensor parameterWithGrad(std::vector<float> grad) {
  torch::Tensor p = torch::zeros({static_cast<std::int64_t>(grad.size())}, torch::requires_grad());
  p.mutable_grad() = torch::tensor(grad);
  return p;
}

TEST(LossScaler, UnscaleDividesTheGradientsAndFindsNoOverflow) {
  LossScaler scaler(LossScaler::Options{1024.0, 2.0, 0.5, 3});
  EXPECT_EQ(scaler.scaled(torch::tensor(0.25f)).item<float>(), 256.0f);
  torch::Tensor p = parameterWithGrad({1024.0f, -2048.0f});
  EXPECT_FALSE(scaler.unscale({p}));
  EXPECT_EQ(p.grad()[0].item<float>(), 1.0f);
  EXPECT_EQ(p.grad()[1].item<float>(), -2.0f);
}

TEST(LossScaler, ForcedInfinityOrNanIsAnOverflowThatHalvesTheScale) {
  LossScaler scaler(LossScaler::Options{1024.0, 2.0, 0.5, 3});
  for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    torch::Tensor fine = parameterWithGrad({1.0f, 2.0f});
    torch::Tensor broken = parameterWithGrad({1.0f, bad});
    const double before = scaler.scale();
    const bool overflow = scaler.unscale({fine, broken});
    EXPECT_TRUE(overflow) << bad;
    scaler.update(overflow);
    EXPECT_EQ(scaler.scale(), before / 2) << bad;
    EXPECT_EQ(scaler.cleanSteps(), 0);
  }
  EXPECT_EQ(scaler.skippedSteps(), 3);
}

TEST(LossScaler, ScaleGrowsAfterGrowthIntervalCleanStepsAndAnOverflowRestartsTheCount) {
  LossScaler scaler(LossScaler::Options{8.0, 2.0, 0.5, 3});
  scaler.update(false);
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 8.0);
  scaler.update(true);  // the clean count starts again
  EXPECT_EQ(scaler.scale(), 4.0);
  scaler.update(false);
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 4.0);
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 8.0);
  EXPECT_EQ(scaler.cleanSteps(), 0);
  scaler.restore(0.5, 2, 7);
  EXPECT_EQ(scaler.scale(), 0.5);
  EXPECT_EQ(scaler.cleanSteps(), 2);
  EXPECT_EQ(scaler.skippedSteps(), 7);
  EXPECT_THROW(scaler.restore(0.0, 0, 0), std::invalid_argument);
  EXPECT_THROW(LossScaler(LossScaler::Options{1.0, 1.0, 0.5, 1}), std::invalid_argument);
}

// --- device and backend -------------------------------------------------------------------

TEST(TrainingDevice, CpuAndAutoWithoutAGpuAreTheCpu) {
  core::TrainConfig train;
  train.device = "cpu";
  EXPECT_EQ(resolveTrainingDevice(train), torch::Device(torch::kCPU));
  if (compat::cudaAvailable()) GTEST_SKIP() << "a GPU is visible: auto is CUDA here";
  train.device = "auto";
  EXPECT_EQ(resolveTrainingDevice(train), torch::Device(torch::kCPU));
}

std::string userErrorOf(const std::function<void()>& f, std::string* code = nullptr) {
  try {
    f();
  } catch (const UserError& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "(no error)";
}

TEST(TrainingDevice, CudaWithoutAGpuIsAnErrorNamingTrainDevice) {
  if (compat::cudaAvailable()) GTEST_SKIP() << "a GPU is visible";
  core::TrainConfig train;
  for (const std::string value : {"cuda", "cuda:0", "cuda:3"}) {
    train.device = value;
    std::string code;
    const std::string message = userErrorOf([&] { (void)resolveTrainingDevice(train); }, &code);
    EXPECT_EQ(code, "device_unavailable") << value;
    EXPECT_NE(message.find("train.device \"" + value + "\""), std::string::npos) << message;
  }
  train.device = "gpu0";
  std::string code;
  const std::string message = userErrorOf([&] { (void)resolveTrainingDevice(train); }, &code);
  EXPECT_EQ(code, "config_invalid");
  EXPECT_NE(message.find("train.device"), std::string::npos) << message;
}

TEST(TrainingDevice, BackendAutoIsGlooOnTheCpuAndNcclOnTheCpuIsAnError) {
  core::DistributedConfig d;
  d.backend = core::Backend::Auto;
  EXPECT_EQ(resolveBackend(d, torch::kCPU), "gloo");
  d.backend = core::Backend::Gloo;
  EXPECT_EQ(resolveBackend(d, torch::kCPU), "gloo");
  d.backend = core::Backend::Nccl;
  std::string code;
  const std::string message = userErrorOf([&] { (void)resolveBackend(d, torch::kCPU); }, &code);
  EXPECT_EQ(code, "backend_unsupported");
  EXPECT_NE(message.find("distributed.backend \"nccl\""), std::string::npos) << message;
}

TEST(TrainingDevice, ConfigValidationNamesBadDevicesAndFp16OnTheCpu) {
  core::RunConfig c;
  c.train.device = "cuda:01";
  c.train.precision = core::Precision::Fp16;
  auto errors = core::validate(c);
  auto has = [&](const std::string& path) {
    for (const auto& e : errors) {
      if (e.path == path) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("train.device"));
  c.train.device = "cpu";
  c.distributed.backend = core::Backend::Nccl;
  errors = core::validate(c);
  EXPECT_TRUE(has("train.precision"));
  EXPECT_TRUE(has("distributed.backend"));
  c.train.device = "cuda:7";
  c.train.precision = core::Precision::Bf16;
  errors = core::validate(c);
  EXPECT_TRUE(errors.empty()) << errors.front().path << ": " << errors.front().message;
  EXPECT_EQ(core::parseDeviceSpec("cuda:12")->index, 12);
  EXPECT_FALSE(core::parseDeviceSpec("cuda:"));
  EXPECT_FALSE(core::parseDeviceSpec("CUDA"));
}

// --- loss scaling in training runs --------------------------------------------------------

core::RunConfig tinyConfig() {
  core::RunConfig c;
  c.data.image_size = 16;
  c.data.num_frames = 5;
  c.data.synthetic_clips = 32;
  c.data.hflip = false;
  c.model.init_dim = 8;
  c.model.max_dim = 16;
  c.model.layers = {{"residual", {}}, {"compress_space", {}}, {"compress_time", {}}};
  c.model.input_conv_kernel = {3, 3, 3};
  c.model.quantizer.codebook_size = 64;
  c.loss.perceptual_weight = 0;
  c.loss.adversarial_weight = 0;
  c.train.device = "cpu";
  c.train.batch_size = 2;
  c.train.lr = 2e-3;
  c.train.warmup_steps = 0;
  c.train.max_steps = 6;
  c.train.log_every = 1;
  c.train.valid_every = 0;
  c.train.sample_every = 0;
  c.train.checkpoint_every = 0;
  c.train.threads = 1;
  c.train.ema = false;
  return c;
}

std::vector<core::MetricsRow> trainRows(const fs::path& dir) {
  std::vector<core::MetricsRow> rows;
  std::ifstream in(dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto row = core::parseMetricsLine(line);
    if (row && !row->values.empty() && row->values.front().first == "train/recon_loss")
      rows.push_back(*row);
  }
  return rows;
}

double valueAt(const core::MetricsRow& row, const std::string& name) {
  for (const auto& [n, v] : row.values) {
    if (n == name) return v;
  }
  ADD_FAILURE() << "no " << name << " at step " << row.step;
  return std::numeric_limits<double>::quiet_NaN();
}

std::string fileBytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(LossScaling, APowerOfTwoScaleLeavesTrainingBitIdentical) {
  // Multiplying the loss by 2^k and the gradients by 2^-k is exact in floating point: a scaled
  // run must end with exactly the weights of an unscaled one. A scaler that forgot to unscale,
  // unscaled twice or clipped the scaled gradients would not.
  TempFolder dir;
  core::RunConfig plain = tinyConfig();
  plain.train.grad_clip = 0.05;  // clipping is active, so its place relative to unscaling matters
  core::RunConfig scaled = plain;
  scaled.train.loss_scaling = core::LossScaling::On;
  scaled.train.loss_scale_init = 4096;
  ASSERT_EQ(testing::train(plain, dir.path() / "plain").code, 0);
  ASSERT_EQ(testing::train(scaled, dir.path() / "scaled").code, 0);
  const std::string a =
      fileBytes(dir.path() / "plain" / "checkpoints" / "step_6" / "model.safetensors");
  const std::string b =
      fileBytes(dir.path() / "scaled" / "checkpoints" / "step_6" / "model.safetensors");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "weights differ between the scaled and the unscaled run";
  const auto rows = trainRows(dir.path() / "scaled");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(valueAt(rows.back(), "train/loss_scale"), 4096.0);
  EXPECT_EQ(valueAt(rows.back(), "train/overflow_steps"), 0.0);
  // The gradient norm is logged unscaled.
  EXPECT_EQ(valueAt(rows.front(), "train/grad_norm"),
            valueAt(trainRows(dir.path() / "plain").front(), "train/grad_norm"));
}

TEST(LossScaling, ForcedInfinitiesSkipStepsLowerTheScaleAndTheScaleResumes) {
  // A scale of 2^130 overflows float32 (max ~2^128): the scaled loss is inf, its gradients
  // inf/NaN. Those steps are skipped, the scale halves until it fits, then training proceeds:
  // no non-finite warning, no rollback, and the loss falls.
  TempFolder dir;
  core::RunConfig c = tinyConfig();
  c.train.max_steps = 12;
  c.train.checkpoint_every = 12;
  c.train.loss_scaling = core::LossScaling::On;
  c.train.loss_scale_init = std::ldexp(1.0, 130);
  c.train.loss_scale_growth_interval = 100;
  const auto r = testing::train(c, dir.path() / "run");
  ASSERT_EQ(r.code, 0);
  for (const auto& e : r.events) {
    EXPECT_EQ(e.find("nonfinite_step"), std::string::npos) << e;
    EXPECT_EQ(e.find("rollback"), std::string::npos) << e;
  }
  const auto rows = trainRows(dir.path() / "run");
  ASSERT_EQ(rows.size(), 12u);
  const double skipped = valueAt(rows.back(), "train/overflow_steps");
  const double scale = valueAt(rows.back(), "train/loss_scale");
  // Each skipped step halved the scale once: scale x 2^skipped is the initial scale.
  EXPECT_GE(skipped, 2.0);
  EXPECT_EQ(scale * std::ldexp(1.0, static_cast<int>(skipped)), c.train.loss_scale_init);
  EXPECT_LT(scale, std::ldexp(1.0, 128));
  for (const auto& row : rows)
    EXPECT_TRUE(std::isfinite(valueAt(row, "train/grad_norm"))) << row.step;
  EXPECT_LT(valueAt(rows.back(), "train/recon_loss"), valueAt(rows.front(), "train/recon_loss"));

  // The checkpoint carries the scale; a resumed run continues from it, not from loss_scale_init.
  std::ifstream state_file(dir.path() / "run" / "checkpoints" / "step_12" / "state.json");
  const auto state = nlohmann::json::parse(state_file);
  EXPECT_EQ(state.at("loss_scale").at("scale").get<double>(), scale);
  EXPECT_EQ(state.at("loss_scale").at("skipped").get<double>(), skipped);
  core::RunConfig longer = c;
  longer.train.max_steps = 14;
  ASSERT_EQ(testing::train(longer, dir.path() / "run", /*resume=*/true).code, 0);
  const auto resumed = trainRows(dir.path() / "run");
  ASSERT_EQ(resumed.size(), 14u);
  EXPECT_EQ(valueAt(resumed.back(), "train/loss_scale"), scale);
  EXPECT_EQ(valueAt(resumed.back(), "train/overflow_steps"), skipped);
}

TEST(LossScaling, Fp16OnTheCpuIsRefusedNamingTrainPrecision) {
  TempFolder dir;
  core::RunConfig c = tinyConfig();
  c.train.device = "auto";
  c.train.precision = core::Precision::Fp16;
  if (compat::cudaAvailable()) GTEST_SKIP() << "a GPU is visible: fp16 is allowed";
  const auto r = testing::train(c, dir.path() / "run");
  EXPECT_EQ(r.code, 1);
  bool named = false;
  for (const auto& e : r.events) {
    named = named || (e.find("\"code\":\"precision_unsupported\"") != std::string::npos &&
                      e.find("train.precision") != std::string::npos);
  }
  EXPECT_TRUE(named);
}

TEST(Precision, AutoIsBf16WhereTheCpuComputesItAndHelloSaysWhy) {
  const bool native = cpuFeatures().nativeBf16();
  EXPECT_EQ(resolvePrecision(core::Precision::Auto, torch::kCPU),
            native ? core::Precision::Bf16 : core::Precision::Fp32);
  for (auto p : {core::Precision::Fp32, core::Precision::Bf16, core::Precision::Fp16})
    EXPECT_EQ(resolvePrecision(p, torch::kCPU), p);
  const std::string why = describePrecision(core::Precision::Auto, torch::kCPU);
  EXPECT_EQ(why.rfind(native ? "bf16 (auto: the CPU computes bf16: "
                             : "fp32 (auto: this CPU has "
                               "neither AMX-BF16 nor AVX512-BF16)",
                      0),
            0u)
      << why;
  EXPECT_EQ(describePrecision(core::Precision::Bf16, torch::kCPU), "bf16");

  // A run with "auto" trains, says what it chose in hello, and its loss falls.
  TempFolder dir;
  core::RunConfig c = tinyConfig();
  c.train.precision = core::Precision::Auto;
  c.train.max_steps = 8;
  const auto r = testing::train(c, dir.path() / "run");
  ASSERT_EQ(r.code, 0);
  const auto decoded = core::decodeEventLine(r.events.front());
  ASSERT_TRUE(decoded.ok());
  const auto* hello = std::get_if<core::HelloEvent>(decoded.event());
  ASSERT_NE(hello, nullptr);
  EXPECT_EQ(hello->precision, why);
  EXPECT_EQ(hello->cpu, cpuFeatures().summary());
  // bf16 is checked against fp32 first, in a phase of its own; then it trains in bf16.
  bool checked = false;
  for (const auto& e : r.events) {
    checked = checked || e.find("\"phase\":\"precision\"") != std::string::npos;
    EXPECT_EQ(e.find("precision_fallback"), std::string::npos) << e;
  }
  EXPECT_EQ(checked, native);
  const auto rows = trainRows(dir.path() / "run");
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_LT(valueAt(rows.back(), "train/recon_loss"), valueAt(rows.front(), "train/recon_loss"));
}

TEST(Precision, AutoChecksEveryConvolutionInBf16AndFallsBackToFp32OnAWrongOne) {
  if (!cpuFeatures().nativeBf16()) GTEST_SKIP() << "this CPU computes no bf16: auto is fp32";
  core::RunConfig c = tinyConfig();
  c.train.precision = core::Precision::Auto;
  const torch::Tensor x = torch::rand({2, 3, 5, 16, 16}) * 2 - 1;
  {
    TrainingStep step(c, TrainingStepSetup{});
    ASSERT_TRUE(step.reducedPrecision());
    int calls = 0, total = 0;
    EXPECT_EQ(step.checkAutoPrecision(x,
                                      [&](int done, int of) {
                                        ++calls;
                                        total = of;
                                        EXPECT_EQ(done, calls);
                                      }),
              "");
    EXPECT_GE(total, 5);  // the tokenizer's convolutions, each checked
    EXPECT_EQ(calls, total);
    EXPECT_TRUE(step.reducedPrecision());
    for (const auto& p : step.tokenizer()->parameters())
      EXPECT_TRUE(!p.grad().defined() || p.grad().abs().sum().item<double>() == 0);
  }
  {
    // A VQ's EMA codebook moves in a training-mode step; the check leaves it as it found it.
    core::RunConfig vq = c;
    vq.model.quantizer.type = core::QuantizerType::Vq;
    vq.model.quantizer.vq_ema = true;
    vq.model.quantizer.codebook_size = 16;
    TrainingStep step(vq, TrainingStepSetup{});
    std::vector<torch::Tensor> before;
    for (const auto& t : step.tokenizer()->buffers()) before.push_back(t.clone());
    for (const auto& t : step.tokenizer()->parameters()) before.push_back(t.detach().clone());
    EXPECT_EQ(step.checkAutoPrecision(x, {}), "");
    std::size_t i = 0;
    for (const auto& t : step.tokenizer()->buffers()) EXPECT_TRUE(torch::equal(t, before[i++]));
    for (const auto& t : step.tokenizer()->parameters())
      EXPECT_TRUE(torch::equal(t.detach(), before[i++]));
  }
  // A convolution 10 % off in bf16 (as a broken kernel would be) sends the step back to fp32,
  // naming the convolution.
  TrainingStep step(c, TrainingStepSetup{});
  const std::string wrong = step.checkAutoPrecision(
      x, {}, [](const torch::Tensor& in, const torch::Tensor& w, const ConvolutionShape& shape) {
        return convolve(in, w, shape) * 1.1;
      });
  EXPECT_NE(wrong.find("relative error"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find(" * ["), std::string::npos) << wrong;
  EXPECT_FALSE(step.reducedPrecision());
  // Explicit bf16 is the user's choice: nothing is checked.
  c.train.precision = core::Precision::Bf16;
  TrainingStep explicit_bf16(c, TrainingStepSetup{});
  EXPECT_EQ(explicit_bf16.checkAutoPrecision(
                x, {},
                [](const torch::Tensor& in, const torch::Tensor& w, const ConvolutionShape& shape) {
                  return convolve(in, w, shape) * 1.1;
                }),
            "");
  EXPECT_TRUE(explicit_bf16.reducedPrecision());
}

TEST(Precision, EveryLayerTypeOfTheReadmeConfigurationTrainsInBf16) {
  // The README configuration's layers, attention (causal in time, with its mask) included: a bf16
  // forward and backward give finite losses and gradients (a causal mask of float's lowest did
  // not fit a bf16 score).
  torch::manual_seed(5);
  core::RunConfig c = tinyConfig();
  c.model.layers = {{"residual", {}},     {"compress_space", {}}, {"linear_attend_space", {}},
                    {"attend_space", {}}, {"compress_time", {}},  {"attend_time", {}},
                    {"gateloop_time", {}}};
  const auto tokenizer = makeTokenizer(c.model, c.data);
  compat::AutocastScope autocast(c10::DeviceType::CPU, at::kBFloat16, true);
  const TokenizerOutput out = tokenizer->forward(torch::rand({2, 3, 5, 16, 16}) * 2 - 1);
  torch::Tensor loss = torch::zeros({});
  for (const auto& [name, value] : out.losses) {
    EXPECT_TRUE(std::isfinite(value.item<double>())) << name;
    if (name == "recon_l1" || name == "quantizer") loss = loss + value;
  }
  loss.backward();
  int with_gradient = 0;
  for (const auto& p : tokenizer->parameters()) {
    if (!p.grad().defined()) continue;
    ++with_gradient;
    EXPECT_TRUE(torch::isfinite(p.grad()).all().item<bool>());
  }
  EXPECT_GT(with_gradient, 10);
}

TEST(Precision, Bf16AutocastKeepsTheQuantizerLossesAndNormsInFp32) {
  torch::manual_seed(3);
  core::RunConfig c = tinyConfig();
  c.model.encoder_norm = false;  // the encoder's last layer is a convolution then
  const auto tokenizer = makeTokenizer(c.model, c.data);
  const torch::Tensor video = torch::rand({2, 3, 5, 16, 16}) * 2 - 1;
  compat::AutocastScope autocast(c10::DeviceType::CPU, at::kBFloat16, true);
  // The convolutions run in bf16 ...
  const torch::Tensor latent = tokenizer->encode(video);
  EXPECT_EQ(latent.scalar_type(), at::kBFloat16);
  // ... the quantizer, the reconstruction's losses and the norms do not.
  const TokenizerOutput out = tokenizer->forward(video);
  EXPECT_EQ(out.recon.scalar_type(), at::kFloat);
  for (const auto& [name, value] : out.losses) EXPECT_EQ(value.scalar_type(), at::kFloat) << name;
  const QuantizerOutput q = tokenizer->quantize(latent);
  EXPECT_EQ(q.quantized.scalar_type(), at::kFloat);
  EXPECT_TRUE(torch::equal(q.indices, tokenizer->quantize(latent.to(at::kFloat)).indices));
  RMSNorm norm(4, true);
  EXPECT_EQ(norm(torch::rand({2, 4, 3, 5, 5}).to(at::kBFloat16)).scalar_type(), at::kFloat);
  // The backward through the bf16 convolutions leaves fp32 gradients on the fp32 parameters.
  out.losses.front().second.backward();
  for (const auto& p : tokenizer->parameters()) {
    if (!p.grad().defined()) continue;
    EXPECT_EQ(p.grad().scalar_type(), at::kFloat);
  }
}

TEST(TrainingDevice, HelloNamesTheDeviceItsNameAndMemory) {
  TempFolder dir;
  core::RunConfig c = tinyConfig();
  c.train.max_steps = 1;
  const auto r = testing::train(c, dir.path() / "run");
  ASSERT_EQ(r.code, 0);
  ASSERT_FALSE(r.events.empty());
  const auto decoded = core::decodeEventLine(r.events.front());
  ASSERT_TRUE(decoded.ok());
  const auto* hello = std::get_if<core::HelloEvent>(decoded.event());
  ASSERT_NE(hello, nullptr);
  EXPECT_EQ(hello->device, "cpu");
  EXPECT_GT(hello->device_memory_bytes, 64ll << 20);  // the machine's memory
}

}  // namespace
}  // namespace tb::trainer
