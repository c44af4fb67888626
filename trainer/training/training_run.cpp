// runTraining: one process's run, from its thread count and device to the training loop's exit
// code; everything it reports before the loop exists (hello, a missing GPU, an unwritable run
// directory) goes out as events too.
#include "trainer/training/training_run.h"

#include "core/metric_names.h"
#include "trainer/distributed/rank_group.h"
#include "trainer/runtime_info.h"
#include "trainer/torch_compat.h"
#include "trainer/training/training_loop.h"
#include "trainer/training_device.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>
#include <thread>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;

/// train.threads beyond this many per core is refused.
constexpr int kThreadsPerCore = 4;

}  // namespace

int runTraining(const core::RunConfig& config, const core::RunDirectory& run,
                const TrainOptions& options, EventSink& events, RunControl& control) {
  const distributed::LaunchInfo& launch = options.launch;
  // Ranks on one node share its cores.
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int threads = config.train.threads > 0
                          ? config.train.threads
                          : std::max(1, cores / std::max(1, launch.local_world_size));
  std::unique_ptr<distributed::RankGroup> group;
  auto fail = [&](const std::string& code, const std::string& message, const std::string& hint) {
    std::cerr << "tokenbench-trainer"
              << (group ? " rank " + std::to_string(group->rank()) : std::string())
              << ": error: " << message << "\n";
    if (group && code != "rank_failed") group->reportFailure(message);
    events.emit(core::ErrorEvent{code, message, hint});
    events.emit(core::DoneEvent{"failed", {}});
  };
  // More threads than 4 per core only thrash (1,024 on 2 cores never reached a step in 60 s).
  if (const int limit = kThreadsPerCore * cores; threads > limit) {
    events.emit(
        makeHelloEvent(queryRuntime(), launch.world_size, launch.launcher, run.root().string()));
    fail("config_invalid",
         "train.threads: " + std::to_string(threads) + " is more than " +
             std::to_string(kThreadsPerCore) + " per core of this machine (" +
             std::to_string(cores) + " cores: at most " + std::to_string(limit) + ")",
         "set train.threads to 0 (cores / local ranks) or at most " + std::to_string(limit));
    return 1;
  }
  torch::set_num_threads(threads);
  // The device first: hello names it. A GPU that is missing or busy is the user's to fix.
  torch::Device device = torch::kCPU;
  try {
    device = resolveTrainingDevice(config.train, config.distributed, launch);
  } catch (const UserError& e) {
    events.emit(
        makeHelloEvent(queryRuntime(), launch.world_size, launch.launcher, run.root().string()));
    fail(e.code(), e.what(), e.hint());
    return 1;
  }
  compat::setCurrentDevice(device);
  if (device.is_cuda())
    compat::setCudnnBenchmark(true);  // fixed clip shapes: pick the fastest kernels once
  const RuntimeInfo rt = queryRuntime(device);
  // hello names the run directory, and whoever reads it may open it at once: it exists first.
  std::error_code made;
  if (launch.rank == 0) fs::create_directories(run.root(), made);
  core::HelloEvent hello =
      makeHelloEvent(rt, launch.world_size, launch.launcher, run.root().string());
  hello.precision = describePrecision(config.train.precision, device);
  events.emit(hello);
  if (rt.reference_blas) {
    events.emit(core::WarningEvent{
        std::string(core::warning_code::kReferenceBlas),
        "LibTorch is using the slow reference BLAS (" + rt.blas + "); install libopenblas0-openmp",
        {}});
  }
  if (made) {
    fail("run_dir_unwritable", "cannot create " + run.root().string() + ": " + made.message(),
         "choose a --run-dir on a writable file system");
    return 1;
  }
  // Before the loop opens its log there: planted links, someone else's folder.
  if (const std::string problem = launch.rank == 0 ? run.writeProblem() : std::string();
      !problem.empty()) {
    fail("run_dir_invalid", problem, "choose a new --run-dir (or remove the link)");
    return 1;
  }
  try {
    if (launch.distributed())
      group = std::make_unique<distributed::RankGroup>(launch, config.distributed, device);
    TrainingLoop loop(config, run, options, events, control, group.get(), device);
    return loop.run();
  } catch (const TrainingError& e) {
    fail(e.code(), e.what(), e.hint());
    return e.code() == "run_dir_locked" ? 2 : 1;
  } catch (const std::exception& e) {
    fail("internal", e.what(), "");
    return 1;
  }
}

}  // namespace tb::trainer
