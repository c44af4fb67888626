// Sharded training (distributed.strategy zero2, zero3) across real OS processes over Gloo: the
// same global batch on 2 and 4 ranks against one process, what each rank holds, the composition
// with the GAN, activation checkpointing, accumulation, clipping, EMA, bf16 and validation,
// checkpoints resumed under other strategies and world sizes, and a rank killed mid-run.
#include "core/run_config.h"
#include "core/safetensors.h"
#include "tests/distributed/run_weights.h"
#include "tests/distributed/trainer_process.h"
#include "tests/trainer/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::events;
using testing::eventsOf;
using testing::finalWeights;
using testing::freePort;
using testing::kSameBatchTolerance;
using testing::maxDifference;
using testing::reachesStep;
using testing::TempFolder;
using testing::tinyRunConfig;
using testing::TrainerProcess;
using testing::trainRun;
using testing::writeConfig;

core::RunConfig onRanks(core::RunConfig config, const std::string& strategy, int ranks, int batch) {
  config.distributed.strategy = core::parseChoiceOrThrow<core::Strategy>("strategy", strategy);
  config.distributed.nproc_per_node = ranks;
  config.train.batch_size = batch;
  return config;
}

/// What a rank logged it held after its first step.
struct Held {
  std::int64_t parameters = -1, gradients = -1, optimizer_state = -1;
};

Held heldBy(const fs::path& run, int rank) {
  const std::string log =
      TrainerProcess::slurp(run / "logs" / ("rank_" + std::to_string(rank) + ".log"));
  const std::regex line(
      "held on this rank after the first step: parameters ([0-9]+) bytes, gradients ([0-9]+) "
      "bytes, "
      "optimizer state ([0-9]+) bytes");
  std::smatch m;
  Held held;
  if (!std::regex_search(log, m, line)) {
    ADD_FAILURE() << "no held bytes in " << run << " rank " << rank << ":\n" << log;
    return held;
  }
  held.parameters = std::stoll(m[1]);
  held.gradients = std::stoll(m[2]);
  held.optimizer_state = std::stoll(m[3]);
  return held;
}

// A run that took one step at a negligible rate: its step_1 checkpoint holds where training
// started.
fs::path initialRun(core::RunConfig config, const fs::path& dir) {
  config.train.max_steps = 1;
  config.train.lr = 1e-12;
  config.train.discr_lr = 1e-12;
  config.train.valid_every = 0;
  EXPECT_EQ(trainRun(config, dir, "init"), 0);
  return dir / "init";
}

TEST(Sharded, Zero2AndZero3OnTwoAndFourRanksMatchOneRankAndHoldTheirShare) {
  TempFolder dir;
  const core::RunConfig base = tinyRunConfig();
  ASSERT_EQ(trainRun(onRanks(base, "none", 1, 4), dir.path(), "one"), 0);
  core::RunConfig zero2 = onRanks(base, "zero2", 2, 2);
  zero2.distributed.bucket_mb = 0.004;  // several units, reduce-scattered during backward
  const std::map<std::string, core::RunConfig> sharded = {
      {"zero2x2", zero2},
      {"zero3x2", onRanks(base, "zero3", 2, 2)},
      {"zero2x4", onRanks(zero2, "zero2", 4, 1)},
      {"zero3x4", onRanks(base, "zero3", 4, 1)},
  };
  for (const auto& [name, config] : sharded) ASSERT_EQ(trainRun(config, dir.path(), name), 0);

  const auto one = finalWeights(dir.path() / "one", 4);
  const auto one_state = finalWeights(dir.path() / "one", 4, "optimizer.safetensors");
  // The AdamW moments, gathered from the shares, are the one process's whole state. They follow
  // the gradients, which the LFQ's rounding makes differ between the runs by up to 3e-4 of their
  // size on 2 ranks (ddp: 1e-4): a wrong gather (a share misplaced, missing or another moment's)
  // would be off by the moments' own size. On 4 ranks every rank's batch is one clip, four means
  // summed in another order, and the kernels' rounding shows more: on an AVX-512 Xeon zero2x4
  // ends 1.25e-5 from one process (1.3e-5 with ATen's AVX2 kernels), its moments 1.5e-3 of the
  // largest; a misplaced share is off by about the rate (1e-3) a step.
  double largest_moment = 0;
  for (const auto& [name, t] : one_state) {
    if (t.is_floating_point())
      largest_moment = std::max(largest_moment, t.abs().max().item<double>());
  }
  EXPECT_GT(largest_moment, 0);
  for (const auto& [name, config] : sharded) {
    const double slack = config.distributed.nproc_per_node == 4 ? 4 : 1;
    EXPECT_LT(maxDifference(one, finalWeights(dir.path() / name, 4)), slack * kSameBatchTolerance)
        << name;
    const auto state = finalWeights(dir.path() / name, 4, "optimizer.safetensors");
    EXPECT_LT(maxDifference(one_state, state), slack * 1e-3 * largest_moment) << name;
  }
  // Training moved the weights by far more than the tolerance (the comparison is not vacuous).
  TempFolder init;
  EXPECT_GT(
      maxDifference(one, finalWeights(initialRun(onRanks(base, "none", 1, 4), init.path()), 1)),
      100 * kSameBatchTolerance);

  // What each rank holds after a step: zero2 whole parameters and about 1/N of the gradients and
  // of the AdamW state; zero3 about 1/N of all three (shares are padded to N equal parts).
  const Held whole = heldBy(dir.path() / "one", 0);
  EXPECT_GT(whole.parameters, 0);
  EXPECT_EQ(whole.gradients, whole.parameters);
  EXPECT_EQ(whole.optimizer_state, 2 * whole.parameters);
  auto share = [](std::int64_t part, std::int64_t of, int ranks) {
    return static_cast<double>(part) / (static_cast<double>(of) / ranks);
  };
  for (const int ranks : {2, 4}) {
    std::int64_t zero3_sum = 0;
    for (int r = 0; r < ranks; ++r) {
      const Held z2 = heldBy(dir.path() / ("zero2x" + std::to_string(ranks)), r);
      EXPECT_NEAR(share(z2.parameters, whole.parameters, 1), 1.0, 0.05) << "zero2 rank " << r;
      EXPECT_NEAR(share(z2.gradients, whole.gradients, ranks), 1.0, 0.05)
          << "zero2 rank " << r << " of " << ranks;
      EXPECT_NEAR(share(z2.optimizer_state, whole.optimizer_state, ranks), 1.0, 0.05)
          << "zero2 rank " << r;
      const Held z3 = heldBy(dir.path() / ("zero3x" + std::to_string(ranks)), r);
      EXPECT_NEAR(share(z3.parameters, whole.parameters, ranks), 1.0, 0.05)
          << "zero3 rank " << r << " of " << ranks;
      EXPECT_NEAR(share(z3.gradients, whole.gradients, ranks), 1.0, 0.05) << "zero3 rank " << r;
      EXPECT_NEAR(share(z3.optimizer_state, whole.optimizer_state, ranks), 1.0, 0.05)
          << "zero3 rank " << r;
      zero3_sum += z3.parameters;
    }
    EXPECT_GE(zero3_sum, whole.parameters);  // every parameter is held somewhere
  }
}

// The GAN (video discriminator: no random frame picks) with its adaptive weight and R1 penalty,
// activation checkpointing of every layer, 2 micro-batches, a clipping limit the gradients
// exceed, the EMA from step 2, bf16 autocast and validation: zero3 on 2 ranks updates as ddp on 2
// ranks does (same batch per rank), and validates the EMA weights to the same figures.
TEST(Sharded, Zero3ComposesWithTheGanCheckpointingAccumulationClippingEmaBf16AndValidation) {
  TempFolder dir;
  core::RunConfig config = onRanks(tinyRunConfig(), "ddp", 2, 2);
  config.loss.adversarial_weight = 0.5;
  config.loss.discr_start_step = 0;
  config.loss.r1_every = 2;
  config.model.discriminator.type = core::DiscriminatorType::Video;
  config.model.discriminator.dim = 8;
  config.model.discriminator.max_dim = 16;
  config.train.activation_checkpointing = {"all"};
  config.train.grad_accum = 2;
  config.train.grad_clip = 0.05;
  config.train.discr_lr = 1e-3;
  config.train.ema = true;
  config.train.ema_start_step = 2;
  config.train.ema_update_every = 1;
  config.train.ema_beta = 0.5;
  config.train.precision = core::Precision::Bf16;
  config.train.valid_every = 4;
  config.train.valid_clips = 2;
  ASSERT_EQ(trainRun(config, dir.path(), "ddp"), 0);
  ASSERT_EQ(trainRun(onRanks(config, "zero3", 2, 2), dir.path(), "zero3"), 0);
  for (const char* file : {"model.safetensors", "ema.safetensors", "discriminator.safetensors",
                           "optimizer.safetensors", "discr_optimizer.safetensors"}) {
    EXPECT_LT(maxDifference(finalWeights(dir.path() / "ddp", 4, file),
                            finalWeights(dir.path() / "zero3", 4, file)),
              kSameBatchTolerance)
        << file;
  }
  TempFolder init;
  const fs::path start = initialRun(config, init.path());
  for (const char* file : {"model.safetensors", "discriminator.safetensors"}) {
    EXPECT_GT(
        maxDifference(finalWeights(dir.path() / "zero3", 4, file), finalWeights(start, 1, file)),
        100 * kSameBatchTolerance)
        << file;
  }

  // Validation ran on rank 0 with the gathered EMA weights: the same PSNR as ddp's.
  auto psnr = [&](const std::string& run) {
    const std::regex value("\"valid/psnr\":([-0-9.e+]+)");
    std::smatch m;
    const std::string metrics = TrainerProcess::slurp(dir.path() / run / "metrics.jsonl");
    return std::regex_search(metrics, m, value) ? std::stod(m[1]) : -1.0;
  };
  EXPECT_GT(psnr("ddp"), 0);
  EXPECT_NEAR(psnr("zero3"), psnr("ddp"), 1e-3);
}

// Checkpoints stay world-size free: a zero3 checkpoint holds ddp's files (the same tensors,
// gathered), resumes in one process, and a ddp checkpoint resumes under zero3 on 4 ranks. The
// discriminator exists but starts later (its optimiser never stepped: nothing of it to gather);
// the EMA is on from the start.
TEST(Sharded, CheckpointsResumeUnderOtherStrategiesAndWorldSizes) {
  TempFolder dir;
  core::RunConfig config = onRanks(tinyRunConfig(), "ddp", 2, 2);
  config.train.checkpoint_every = 2;
  config.loss.adversarial_weight = 0.1;
  config.loss.discr_start_step = 100;
  config.model.discriminator.type = core::DiscriminatorType::Video;
  config.model.discriminator.dim = 8;
  config.model.discriminator.max_dim = 16;
  config.train.ema = true;  // its file too, gathered and resumed into zero3's shares
  config.train.ema_start_step = 0;
  config.train.ema_update_every = 1;
  ASSERT_EQ(trainRun(config, dir.path(), "ddp"), 0);
  ASSERT_EQ(trainRun(onRanks(config, "zero3", 2, 2), dir.path(), "zero3"), 0);
  EXPECT_EQ(maxDifference(finalWeights(dir.path() / "ddp", 2, "discriminator.safetensors"),
                          finalWeights(dir.path() / "zero3", 2, "discriminator.safetensors")),
            0.0);
  for (const char* file : {"model.safetensors", "optimizer.safetensors", "ema.safetensors"}) {
    const auto ddp = finalWeights(dir.path() / "ddp", 2, file);
    EXPECT_GT(ddp.size(), 10u) << file;
    EXPECT_LT(maxDifference(ddp, finalWeights(dir.path() / "zero3", 2, file)), kSameBatchTolerance)
        << file;
  }

  // resume(from, step 2, as): the checkpoint alone in a new run directory, trained on to step 4.
  auto resume = [&](const std::string& from, const core::RunConfig& as, const std::string& name) {
    const fs::path run = dir.path() / name;
    fs::create_directories(run / "checkpoints");
    fs::copy(dir.path() / from / "checkpoints" / "step_2", run / "checkpoints" / "step_2",
             fs::copy_options::recursive);
    fs::copy_file(writeConfig(as, dir.path() / (name + ".json")), run / "config.json");
    TrainerProcess p({"train", "--run-dir", run.string(), "--resume"},
                     dir.path() / (name + "_log"));
    EXPECT_EQ(p.wait(std::chrono::seconds(300)).value_or(-1), 0) << p.stderrText();
    EXPECT_NE(p.stderrText().find("resumed from checkpoints/step_2"), std::string::npos)
        << p.stderrText();
    return finalWeights(run, 4);
  };
  EXPECT_LT(maxDifference(resume("zero3", onRanks(config, "none", 1, 4), "zero3_on_one"),
                          finalWeights(dir.path() / "zero3", 4)),
            kSameBatchTolerance);
  EXPECT_LT(maxDifference(resume("ddp", onRanks(config, "zero3", 4, 1), "ddp_on_zero3x4"),
                          finalWeights(dir.path() / "ddp", 4)),
            kSameBatchTolerance);
  EXPECT_LT(maxDifference(finalWeights(dir.path() / "ddp_on_zero3x4", 4, "ema.safetensors"),
                          finalWeights(dir.path() / "ddp", 4, "ema.safetensors")),
            kSameBatchTolerance);

  // The optimizer files are state_version 2 (every parameter has its ".step", 0 for the
  // discriminator that has not started), and a zero3 resume refuses one that lost an entry,
  // naming the file and the tensor, as ShardedAdamW's resume does.
  const fs::path written = dir.path() / "zero3" / "checkpoints" / "step_2";
  for (const char* file : {"optimizer.safetensors", "discr_optimizer.safetensors"}) {
    const auto meta = core::SafetensorsFile::read(written / file).metadata();
    EXPECT_EQ(meta.count("state_version") ? meta.at("state_version") : "", "2") << file;
  }
  const fs::path run = dir.path() / "damaged";
  fs::create_directories(run / "checkpoints");
  fs::copy(written, run / "checkpoints" / "step_2", fs::copy_options::recursive);
  const fs::path damaged = run / "checkpoints" / "step_2" / "discr_optimizer.safetensors";
  weights::NamedTensors state = weights::loadTensors(damaged);
  ASSERT_FALSE(state.empty());
  const std::string lost = state.back().first;
  EXPECT_EQ(state.back().second.item<std::int64_t>(), 0) << lost;
  state.pop_back();
  weights::saveTensors(state, damaged, {{"format", "tokenbench-adamw"}, {"state_version", "2"}});
  fs::copy_file(writeConfig(onRanks(config, "zero3", 2, 2), dir.path() / "damaged.json"),
                run / "config.json");
  TrainerProcess p({"train", "--run-dir", run.string(), "--resume"}, dir.path() / "damaged_log");
  EXPECT_EQ(p.wait(std::chrono::seconds(300)).value_or(-1), 1) << p.stderrText();
  EXPECT_NE((p.stdoutText() + p.stderrText())
                .find("step_2/discr_optimizer.safetensors: missing tensor '" + lost + "'"),
            std::string::npos)
      << p.stdoutText() << p.stderrText();
}

// Ranks started as torchrun would (no supervising launcher), under zero3: rank 1 is killed as it
// enters an all-gather of parameters (TB_FAULT_KILL_IN_GATHER, at its 40th: the third step),
// so rank 0 is left inside that gather. Rank 0 ends by itself within distributed.timeout_s,
// naming rank 1 and the all-gather.
TEST(Sharded, ARankKilledMidGatherEndsTheOtherWithinTheTimeout) {
  TempFolder dir;
  core::RunConfig config = onRanks(tinyRunConfig(), "zero3", 1, 2);
  config.distributed.timeout_s = 10;
  config.train.max_steps = 100;
  const int port = freePort();
  auto rankEnv = [&](int rank) {
    return std::map<std::string, std::string>{
        {"RANK", std::to_string(rank)},       {"WORLD_SIZE", "2"},
        {"LOCAL_RANK", std::to_string(rank)}, {"LOCAL_WORLD_SIZE", "2"},
        {"MASTER_ADDR", "127.0.0.1"},         {"MASTER_PORT", std::to_string(port)},
        {"TB_FAULT_KILL_IN_GATHER", "1:40"}};
  };
  const fs::path run = dir.path() / "run";
  const std::vector<std::string> args = {"train", "--config",
                                         writeConfig(config, dir.path() / "c.json").string(),
                                         "--run-dir", run.string()};
  TrainerProcess r0(args, dir.path() / "r0", rankEnv(0));
  TrainerProcess r1(args, dir.path() / "r1", rankEnv(1));
  ASSERT_EQ(r1.wait(std::chrono::seconds(120)).value_or(-1), 128 + SIGKILL) << r1.stderrText();
  const auto killed_at = Clock::now();
  const auto code = r0.wait(std::chrono::seconds(config.distributed.timeout_s + 10));
  ASSERT_TRUE(code) << "rank 0 still running";
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - killed_at).count(),
            config.distributed.timeout_s);
  EXPECT_EQ(*code, 1);
  EXPECT_TRUE(reachesStep(run, 2, std::chrono::seconds(1)))
      << "rank 1 was killed before training began";
  const auto errors = eventsOf<core::ErrorEvent>(events(r0.stdoutText()));
  ASSERT_EQ(errors.size(), 1u) << r0.stdoutText();
  EXPECT_EQ(errors[0].code, "rank_failed");
  EXPECT_NE(errors[0].message.find("rank 0: all-gather failed: rank 1 stopped responding"),
            std::string::npos)
      << errors[0].message;
}

}  // namespace
}  // namespace tb::trainer
