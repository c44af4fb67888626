#include "trainer/training/checkpoint_store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

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

void syncPath(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path.string() + ": cannot open to sync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error(path.string() + ": fsync failed: " + std::strerror(err));
}

void writeFileSynced(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path.string() + ": cannot create: " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path.string() + ": write failed: " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error(path.string() + ": fsync failed: " + std::strerror(err));
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
    for (const auto& entry : fs::directory_iterator(tmp)) syncPath(entry.path());
    writeFileSynced(tmp / core::RunDirectory::kCheckpointCompleteMarker, std::to_string(step) + "\n");
    syncPath(tmp);
    // A checkpoint of the same step (a resumed run saving again) is replaced whole.
    if (fs::exists(final_dir)) fs::remove_all(final_dir);
    fs::rename(tmp, final_dir);
    syncPath(m_run.checkpointsDir());
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
