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

#include "core/run_directory.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

namespace tb::trainer {

class CheckpointStore {
 public:
  explicit CheckpointStore(core::RunDirectory run);

  /// Writes checkpoint `step`: `writeFiles(folder)` fills the temporary folder, then the folder
  /// is completed and renamed. On any failure the temporary folder is removed and the exception
  /// propagates; earlier checkpoints are untouched.
  std::filesystem::path write(std::int64_t step, const std::function<void(const std::filesystem::path&)>& writeFiles);

  /// Newest complete checkpoint, if any.
  std::optional<std::int64_t> latest() const;

  /// Deletes the oldest complete checkpoints beyond `total_limit` (0 keeps all), never one
  /// whose step is in `keep`, and leftover temporary folders. Returns the steps deleted.
  std::vector<std::int64_t> applyRetention(int total_limit, const std::vector<int>& keep);

  std::filesystem::path folder(std::int64_t step) const { return m_run.checkpointDir(step); }

 private:
  core::RunDirectory m_run;
};

/// The checkpoint folder `path` names: `path` itself when it holds model.safetensors (a folder
/// written by training, `init` or `import-magvit2`), else the newest complete checkpoint of the
/// run directory `path`. Throws std::runtime_error naming `path` when it is neither.
std::filesystem::path resolveCheckpointFolder(const std::filesystem::path& path);

/// fsync a file or folder by path; throws std::runtime_error naming it.
void syncPath(const std::filesystem::path& path);
/// Writes `text` to `path` and fsyncs it; throws naming the file (e.g. on a full disk).
void writeFileSynced(const std::filesystem::path& path, const std::string& text);

}  // namespace tb::trainer
