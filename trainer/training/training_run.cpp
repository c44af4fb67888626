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

}  // namespace

int runTraining(const core::RunConfig& config, const core::RunDirectory& run,
                const TrainOptions& options, EventSink& events, RunControl& control) {
  const distributed::LaunchInfo& launch = options.launch;
  // Ranks on one node share its cores.
  const int threads = config.train.threads > 0
                          ? config.train.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                            std::max(1, launch.local_world_size));
  torch::set_num_threads(threads);
  std::unique_ptr<distributed::RankGroup> group;
  auto fail = [&](const std::string& code, const std::string& message, const std::string& hint) {
    std::cerr << "tokenbench-trainer"
              << (group ? " rank " + std::to_string(group->rank()) : std::string())
              << ": error: " << message << "\n";
    if (group && code != "rank_failed") group->reportFailure(message);
    events.emit(core::ErrorEvent{code, message, hint});
    events.emit(core::DoneEvent{"failed", {}});
  };
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
  events.emit(makeHelloEvent(rt, launch.world_size, launch.launcher, run.root().string()));
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
