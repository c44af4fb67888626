#pragma once
// The lock a trainer holds on its run directory (<run>/.lock) while it runs, and the probe the
// window uses to tell a live run from one whose trainer is gone. flock is released by the kernel
// when the holder dies, so a lock left by a killed trainer is simply taken over.

#include <filesystem>
#include <stdexcept>
#include <string>

namespace tb::core {

/// The run directory is locked by another live process.
struct RunLockedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An exclusive lock on a run directory's lock file for the life of the object; the file holds
/// the holder's pid (for the message another trainer gets).
class RunLock {
 public:
  /// Takes the lock on `lock_file` (created when missing). Throws RunLockedError naming the run
  /// directory and the holder's pid when another process holds it, std::runtime_error naming the
  /// file when it cannot be created.
  explicit RunLock(const std::filesystem::path& lock_file);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int m_fd = -1;
};

/// Whether a live process holds `lock_file`'s lock. False when the file is missing or cannot be
/// opened. Never blocks on the lock (it may block on a hung file system, as any read does).
bool isRunLocked(const std::filesystem::path& lock_file);

}  // namespace tb::core
