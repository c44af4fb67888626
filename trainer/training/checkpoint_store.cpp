#include "trainer/training/checkpoint_store.h"

#include "core/atomic_file.h"

#include <algorithm>
#include <stdexcept>

namespace tb::trainer {

namespace fs = std::filesystem;

fs::path resolveCheckpointFolder(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    throw std::runtime_error(path.string() + ": not a checkpoint folder or run directory");
  if (fs::exists(path / "model.safetensors", ec)) return path;
  const core::RunDirectory run(path);
  const auto steps = run.listCheckpointSteps();
  if (steps.empty())
    throw std::runtime_error(path.string() + ": run directory without a complete checkpoint");
  return run.checkpointDir(steps.back());
}

CheckpointStore::CheckpointStore(core::RunDirectory run) : m_run(std::move(run)) {}

fs::path CheckpointStore::write(std::int64_t step, const std::function<void(const fs::path&)>& writeFiles) {
  const fs::path tmp = m_run.checkpointTempDir(step);
  const fs::path final_dir = m_run.checkpointDir(step);
  std::error_code ec;
  fs::remove_all(tmp, ec);
  try {
    fs::create_directories(tmp);
    writeFiles(tmp);
    for (const auto& entry : fs::directory_iterator(tmp)) core::syncPath(entry.path());
    core::writeFileSynced(tmp / core::RunDirectory::kCheckpointCompleteMarker, std::to_string(step) + "\n");
    core::syncPath(tmp);
    // A checkpoint of the same step (a resumed run saving again) is replaced whole.
    if (fs::exists(final_dir)) fs::remove_all(final_dir);
    fs::rename(tmp, final_dir);
    core::syncPath(m_run.checkpointsDir());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return final_dir;
}

std::optional<std::int64_t> CheckpointStore::latest() const {
  const auto steps = m_run.listCheckpointSteps();
  if (steps.empty()) return std::nullopt;
  return steps.back();
}

std::vector<std::int64_t> CheckpointStore::applyRetention(int total_limit, const std::vector<int>& keep) {
  std::vector<std::int64_t> deleted;
  std::error_code ec;
  // Leftovers of interrupted writes.
  if (fs::exists(m_run.checkpointsDir())) {
    for (const auto& entry : fs::directory_iterator(m_run.checkpointsDir(), ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(".step_", 0) == 0) fs::remove_all(entry.path(), ec);
    }
  }
  if (total_limit <= 0) return deleted;
  auto steps = m_run.listCheckpointSteps();
  std::vector<std::int64_t> removable;
  for (auto s : steps) {
    if (std::find(keep.begin(), keep.end(), s) == keep.end()) removable.push_back(s);
  }
  // The limit counts every checkpoint kept; protected ones count but are never deleted.
  std::int64_t excess = static_cast<std::int64_t>(steps.size()) - total_limit;
  for (std::size_t i = 0; i < removable.size() && excess > 0; ++i, --excess) {
    // Never delete the newest checkpoint: it is the one a resume needs.
    if (removable[i] == steps.back()) break;
    fs::remove_all(m_run.checkpointDir(removable[i]), ec);
    if (!ec) deleted.push_back(removable[i]);
  }
  return deleted;
}

}  // namespace tb::trainer
