#pragma once
// One training run on one process (or one rank of a distributed run): the tokenizer, its optimiser
// and schedule, the data, and everything written to the run directory (config.json, metrics.jsonl,
// checkpoints/, events).

#include "core/run_config.h"
#include "core/run_directory.h"
#include "trainer/distributed/launch_environment.h"
#include "trainer/event_sink.h"
#include "trainer/user_error.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace tb::trainer {

/// Requests that reach a running loop from signal handlers and the control thread.
struct RunControl {
  std::atomic<bool> stop{false};        ///< checkpoint, `done` "stopped", return
  std::atomic<bool> checkpoint{false};  ///< checkpoint now, keep training
};

struct TrainOptions {
  bool resume = false;
  double time_budget_s = 0;        ///< overrides train.time_budget_s when > 0
  distributed::LaunchInfo launch;  ///< this process's rank; "single" when alone
  /// Fault injection for tests of the non-finite guard: called once per step attempt with the
  /// step it tries; true makes that attempt's loss read as NaN (on every rank that has it).
  std::function<bool(std::int64_t step)> nonfinite_loss;
};

/// A failure the user can act on, reported as an `error` event with its code.
using TrainingError = UserError;

/// Trains until max_steps, the time budget or a stop request; returns the process exit code
/// (0 also after a stop: the run is resumable). Emits hello ... done on `events`.
int runTraining(const core::RunConfig& config, const core::RunDirectory& run,
                const TrainOptions& options, EventSink& events, RunControl& control);

}  // namespace tb::trainer
