#pragma once
// Checkpoints of a run: checkpoints/step_<N>/ folders written atomically.
//
// A checkpoint is written into checkpoints/.step_<N>.tmp, every file fsync'ed, a COMPLETE marker
// added last, then the folder is renamed to step_<N> and the parent fsync'ed. A folder without
// COMPLETE (a trainer killed mid-write) is never loaded and is cleaned up later; retention
// deletes old checkpoints only after the new one is complete.
//
// Contents: model.safetensors (tokenizer weights; Python's safetensors reads it), ema.safetensors
// (when EMA is on), optimizer.safetensors (AdamW state by parameter name, gathered whole even
// under zero1, so it loads at any world size), discriminator.safetensors and
// discr_optimizer.safetensors (when the GAN loss is on), state.json (step, learning-rate scale,
// elapsed time), rng.safetensors, config.json (the run's configuration).

#include "core/run_config.h"
#include "core/run_directory.h"
#include "trainer/weights/state_dict_io.h"

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

namespace tb::trainer {

class TrainingStep;

/// How far a run has come: the scalars of a checkpoint's state.json besides those of the
/// training step's parts (LeCam anchors, loss scalers), which the store reads from the step.
struct RunProgress {
  std::int64_t step = 0;  ///< optimizer steps done
  double lr_scale = 1.0;  ///< lowered by rollbacks
  /// The cosine schedule's last step when a time budget fixed it (0: train.max_steps): kept, so
  /// that a resumed run follows the same schedule.
  std::int64_t schedule_end = 0;
  double elapsed_s = 0;      ///< training seconds of the sessions before this one
  std::int64_t batches = 0;  ///< batches this rank's loader handed out (skipped steps included)
};

/// The parts of a training run a checkpoint saves and restores (views of the loop's members).
struct TrainingState {
  TrainingStep& steps;  ///< models, optimizers, shards, sharded EMA, LeCam anchors, loss scalers
  weights::NamedTensors& ema;  ///< the whole EMA on rank 0 when it is not sharded; empty when off
  RunProgress& progress;
  const core::RunConfig& config;
  torch::Device device;
};

class CheckpointStore {
 public:
  explicit CheckpointStore(core::RunDirectory run);

  /// Writes checkpoint `step`: `writeFiles(folder)` fills the temporary folder, then the folder
  /// is completed and renamed. On any failure the temporary folder is removed and the exception
  /// propagates; earlier checkpoints are untouched.
  std::filesystem::path write(std::int64_t step,
                              const std::function<void(const std::filesystem::path&)>& writeFiles);

  /// Newest complete checkpoint, if any.
  std::optional<std::int64_t> latest() const;

  /// Deletes the oldest complete checkpoints beyond `total_limit` (0 keeps all), never one
  /// whose step is in `keep`, and leftover temporary folders. Returns the steps deleted.
  std::vector<std::int64_t> applyRetention(int total_limit, const std::vector<int>& keep);

  std::filesystem::path folder(std::int64_t step) const { return m_run.checkpointDir(step); }

  /// The files of checkpoint `state.progress.step` into `dir` (rank 0), as listed at the top of
  /// this header; `optimizer_state`/`discr_optimizer_state` are the gathered AdamW states
  /// (empty under zero2 and zero3, whose flat shards write their own). With `dir` null (the other
  /// ranks under zero2 and zero3) only this rank's part in the gathers of the sharded files, in
  /// the same order. Collective under zero2 and zero3.
  static void writeFiles(const std::filesystem::path* dir, const TrainingState& state,
                         const weights::NamedTensors& optimizer_state,
                         const weights::NamedTensors& discr_optimizer_state);

  /// Restores every part of `state` from checkpoint `step`: each tensor must be there with its
  /// dtype and shape. Throws UserError "checkpoint_unreadable" naming the folder and the file.
  /// `log` hears what was not there and starts afresh (a discriminator added later).
  void load(std::int64_t step, TrainingState& state,
            const std::function<void(const std::string&)>& log) const;

 private:
  core::RunDirectory m_run;
};

/// The checkpoint folder `path` names: `path` itself when it holds model.safetensors (a folder
/// written by training, `init` or `import-magvit2`), else the newest complete checkpoint of the
/// run directory `path`. Throws std::runtime_error naming `path` when it is neither.
std::filesystem::path resolveCheckpointFolder(const std::filesystem::path& path);

}  // namespace tb::trainer
