// Checks that need a CUDA device (label `cuda`; scripts/gpu-check.sh runs them on a GPU machine).
// Without one each test skips with a message: CI has no GPU, and a CPU-only LibTorch has no CUDA.
//   - a forward and backward on CUDA equal the CPU's (fp32 without TF32; bf16 within its
//     rounding);
//   - 100 bf16 steps of bench-small lower the loss, on procedural clips and on a shard of real
//     footage (TB_TEST_SHARDS: a folder `tokenbench-trainer pack` wrote);
//   - a checkpoint written on the GPU resumes on the CPU, and that one on the GPU again;
//   - NCCL at world size 1 reduces and broadcasts;
//   - two ranks sharing the one GPU over Gloo equal one rank at the same global batch.
#include "core/metrics_log.h"
#include "core/presets.h"
#include "tests/distributed/run_weights.h"
#include "tests/distributed/trainer_process.h"
#include "tests/trainer/test_support.h"
#include "trainer/distributed/rank_group.h"
#include "trainer/models/tokenizer.h"
#include "trainer/torch_compat.h"
#include "trainer/torch_compat_c10d.h"
#include "trainer/training/training_step.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using testing::TempFolder;
using testing::TrainerProcess;

#define TB_REQUIRE_CUDA()                                     \
  if (!compat::cudaAvailable())                               \
  GTEST_SKIP() << (TB_WITH_CUDA ? "no CUDA device is visible" \
                                : "this LibTorch is CPU-only (no CUDA)")

const torch::Device kGpu(torch::kCUDA, 0);

core::RunConfig tinyConfig() {
  core::RunConfig c;
  c.data.image_size = 16;
  c.data.num_frames = 5;
  c.data.synthetic_clips = 64;
  c.data.hflip = false;
  c.data.workers = 1;
  c.model.init_dim = 8;
  c.model.max_dim = 16;
  c.model.layers = {
      {"residual", {}}, {"compress_space", {}}, {"attend_space", {}}, {"compress_time", {}}};
  c.model.input_conv_kernel = {3, 3, 3};
  c.model.quantizer.codebook_size = 64;
  c.loss.adversarial_weight = 0;
  c.loss.perceptual_weight = 0;
  c.train.device = "cuda:0";
  c.train.max_steps = 4;
  c.train.warmup_steps = 0;
  c.train.lr = 1e-3;
  c.train.ema = false;
  c.train.valid_every = 0;
  c.train.sample_every = 0;
  c.train.log_every = 1;
  c.train.checkpoint_every = 0;
  c.train.threads = 2;
  c.distributed.timeout_s = 30;
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

// Mean recon loss of the first `head` and the last `tail` training rows.
std::pair<double, double> lossFirstAndLast(const std::vector<core::MetricsRow>& rows,
                                           std::size_t head, std::size_t tail) {
  double first = 0, last = 0;
  for (std::size_t i = 0; i < head; ++i)
    first += rows[i].values.front().second / static_cast<double>(head);
  for (std::size_t i = 0; i < tail; ++i)
    last += rows[rows.size() - 1 - i].values.front().second / static_cast<double>(tail);
  return {first, last};
}

struct ForwardBackward {
  torch::Tensor recon, indices, loss;
  std::vector<torch::Tensor> grads;
};

ForwardBackward run(Tokenizer& tokenizer, const torch::Tensor& x, bool bf16) {
  tokenizer.zero_grad();
  ForwardBackward out;
  compat::AutocastScope autocast(x.device().type(), at::kBFloat16, bf16);
  const TokenizerOutput o = tokenizer.forward(x);
  out.loss = lossTerm(o, "recon_l1") + lossTerm(o, "quantizer");
  out.loss.backward();
  out.recon = o.recon.detach().to(torch::kCPU, torch::kFloat);
  out.indices = o.indices.cpu();
  for (const auto& p : tokenizer.parameters())
    out.grads.push_back(p.grad().defined() ? p.grad().cpu() : torch::Tensor());
  out.loss = out.loss.detach().cpu();
  return out;
}

TEST(Cuda, ForwardAndBackwardEqualTheCpu) {
  TB_REQUIRE_CUDA();
  const core::RunConfig c = tinyConfig();
  torch::manual_seed(5);
  auto cpu = makeTokenizer(c.model, c.data);
  torch::manual_seed(5);
  auto gpu = makeTokenizer(c.model, c.data);
  gpu->to(kGpu);
  const torch::Tensor x = torch::rand({2, 3, 5, 16, 16}) * 2 - 1;
  // fp32 on both sides: TF32 off, else CUDA convolutions and matrix products round to 10 bits.
  at::globalContext().setAllowTF32CuDNN(false);
  at::globalContext().setAllowTF32CuBLAS(false);
  const ForwardBackward a = run(*cpu, x, false);
  const ForwardBackward b = run(*gpu, x.to(kGpu), false);
  ASSERT_TRUE(torch::equal(a.indices, b.indices)) << "codes differ between CPU and CUDA";
  EXPECT_LT((a.recon - b.recon).abs().max().item<double>(), 1e-4);
  EXPECT_NEAR(a.loss.item<double>(), b.loss.item<double>(), 1e-5);
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (std::size_t i = 0; i < a.grads.size(); ++i) {
    if (!a.grads[i].defined()) continue;
    EXPECT_TRUE(torch::allclose(a.grads[i], b.grads[i], 1e-3, 1e-5))
        << "gradient " << i << ": largest difference "
        << (a.grads[i] - b.grads[i]).abs().max().item<double>();
  }
  // bf16 autocast on the GPU stays within bf16's rounding of the fp32 result.
  const ForwardBackward h = run(*gpu, x.to(kGpu), true);
  EXPECT_NEAR(h.loss.item<double>(), a.loss.item<double>(),
              0.03 * std::abs(a.loss.item<double>()) + 1e-3);
  EXPECT_LT((h.recon - a.recon).abs().mean().item<double>(), 0.02);
  at::globalContext().setAllowTF32CuDNN(true);
}

core::RunConfig benchSmallBf16(int steps) {
  core::ConfigLoad load = core::loadPreset("bench-small");
  EXPECT_TRUE(load.ok());
  core::RunConfig c = load.config;
  c.train.device = "cuda";
  c.train.precision = core::Precision::Bf16;
  c.train.max_steps = steps;
  c.train.warmup_steps = 10;
  c.train.lr = 1e-3;
  c.train.log_every = 1;
  c.train.valid_every = 0;
  c.train.sample_every = 0;
  c.train.checkpoint_every = 0;
  c.loss.perceptual_weight = 0;
  c.loss.adversarial_weight = 0;
  return c;
}

TEST(Cuda, HundredBf16StepsOfBenchSmallLowerTheLossOnProceduralClips) {
  TB_REQUIRE_CUDA();
  TempFolder dir;
  core::RunConfig c = benchSmallBf16(100);
  c.data.type = core::DataType::Synthetic;
  const auto r = testing::train(c, dir.path() / "run");
  ASSERT_EQ(r.code, 0) << (r.events.empty() ? "" : r.events.back());
  const auto rows = trainRows(dir.path() / "run");
  ASSERT_EQ(rows.size(), 100u);
  const auto [first, last] = lossFirstAndLast(rows, 5, 10);
  EXPECT_LT(last, 0.8 * first) << "first " << first << " last " << last;
  EXPECT_NE(r.events.front().find("\"device\":\"cuda:0\""), std::string::npos) << r.events.front();
}

TEST(Cuda, HundredBf16StepsOfBenchSmallLowerTheLossOnAShardOfRealFootage) {
  TB_REQUIRE_CUDA();
  const char* shards = std::getenv("TB_TEST_SHARDS");
  if (shards == nullptr || *shards == '\0')
    GTEST_SKIP() << "TB_TEST_SHARDS (a packed shard folder) is not set";
  TempFolder dir;
  core::RunConfig c = benchSmallBf16(100);
  c.data.type = core::DataType::Shards;
  c.data.path = shards;
  c.data.valid_fraction = 0;
  c.data.valid_path = "";
  const auto r = testing::train(c, dir.path() / "run");
  ASSERT_EQ(r.code, 0) << (r.events.empty() ? "" : r.events.back());
  const auto rows = trainRows(dir.path() / "run");
  ASSERT_EQ(rows.size(), 100u);
  const auto [first, last] = lossFirstAndLast(rows, 5, 10);
  EXPECT_LT(last, 0.8 * first) << "first " << first << " last " << last;
}

TEST(Cuda, ACheckpointWrittenOnTheGpuResumesOnTheCpuAndBack) {
  TB_REQUIRE_CUDA();
  TempFolder dir;
  const fs::path run = dir.path() / "run";
  core::RunConfig c = tinyConfig();
  c.train.checkpoint_every = 4;
  ASSERT_EQ(testing::train(c, run).code, 0);
  core::RunConfig on_cpu = c;
  on_cpu.train.device = "cpu";
  on_cpu.train.max_steps = 8;
  const auto r_cpu = testing::train(on_cpu, run, /*resume=*/true);
  ASSERT_EQ(r_cpu.code, 0);
  core::RunConfig back = c;
  back.train.max_steps = 12;
  const auto r_gpu = testing::train(back, run, /*resume=*/true);
  ASSERT_EQ(r_gpu.code, 0);
  const auto rows = trainRows(run);
  ASSERT_EQ(rows.size(), 12u);
  for (const auto& row : rows) EXPECT_TRUE(std::isfinite(row.values.front().second)) << row.step;
  EXPECT_NE(r_cpu.events.front().find("\"device\":\"cpu\""), std::string::npos);
  EXPECT_NE(r_gpu.events.front().find("\"device\":\"cuda:0\""), std::string::npos);
  // Continuity: the first resumed step's loss is close to the last one before it (same weights,
  // same optimiser state), not a restart from the initialisation.
  EXPECT_NEAR(rows[4].values.front().second, rows[3].values.front().second, 0.1);
  EXPECT_NEAR(rows[8].values.front().second, rows[7].values.front().second, 0.1);
}

TEST(Cuda, NcclAtWorldSizeOneReducesAndBroadcasts) {
  TB_REQUIRE_CUDA();
  if (!compat::ncclAvailable()) GTEST_SKIP() << "this LibTorch has no NCCL";
  distributed::LaunchInfo launch;
  launch.launcher = "torchrun";
  launch.world_size = 1;
  launch.master_addr = "127.0.0.1";
  launch.master_port = testing::freePort();
  core::DistributedConfig config;
  config.backend = core::Backend::Nccl;
  config.timeout_s = 30;
  distributed::RankGroup group(launch, config, kGpu);
  EXPECT_EQ(group.backend(), "nccl");
  EXPECT_EQ(group.commDevice(), kGpu);
  std::vector<torch::Tensor> t = {
      torch::arange(4, torch::TensorOptions().device(kGpu).dtype(torch::kFloat)),
      torch::tensor({1.5, 2.5}, torch::kDouble)};  // a CPU tensor is staged
  group.allReduceSum(t);
  EXPECT_TRUE(torch::equal(t[0].cpu(), torch::arange(4, torch::kFloat)));
  EXPECT_TRUE(torch::equal(t[1], torch::tensor({1.5, 2.5}, torch::kDouble)));
  group.broadcast(t, 0);
  EXPECT_TRUE(t[0].is_cuda());
}

TEST(Cuda, TwoRanksSharingTheGpuOverGlooMatchOneRank) {
  TB_REQUIRE_CUDA();
  TempFolder dir;
  core::RunConfig one = tinyConfig();
  one.train.batch_size = 4;
  core::RunConfig two = tinyConfig();
  two.train.batch_size = 2;
  two.distributed.strategy = core::Strategy::Ddp;
  two.distributed.nproc_per_node = 2;
  two.distributed.backend = core::Backend::Gloo;
  two.distributed.bucket_mb = 0.001;
  // TF32 off in cuDNN and cuBLAS (NVIDIA's own switch), so both runs compute in float32.
  const std::map<std::string, std::string> env = {{"NVIDIA_TF32_OVERRIDE", "0"}};
  auto trainProcess = [&](const core::RunConfig& config, const std::string& name) {
    TrainerProcess p(
        {"train", "--config", testing::writeConfig(config, dir.path() / (name + ".json")).string(),
         "--run-dir", (dir.path() / name).string()},
        dir.path() / name, env);
    const auto code = p.wait(std::chrono::seconds(300));
    EXPECT_EQ(code.value_or(-1), 0) << name << ":\n" << p.stderrText();
  };
  trainProcess(one, "one");
  trainProcess(two, "two");
  const auto a = testing::finalWeights(dir.path() / "one", 4);
  const auto b = testing::finalWeights(dir.path() / "two", 4);
  // cuDNN's backward may accumulate in another order per batch size: 1e-4 instead of the CPU
  // test's 1e-5, still 100x below how far 4 steps move the weights (checked below).
  const double tolerance = 1e-4;
  EXPECT_LT(testing::maxDifference(a, b), tolerance);
  core::RunConfig still = one;
  still.train.max_steps = 1;
  still.train.lr = 1e-12;
  trainProcess(still, "init");
  EXPECT_GT(testing::maxDifference(a, testing::finalWeights(dir.path() / "init", 1)),
            100 * tolerance);
}

}  // namespace
}  // namespace tb::trainer
