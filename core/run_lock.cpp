#include "core/run_lock.h"

#include <cerrno>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace tb::core {

RunLock::RunLock(const std::filesystem::path& lock_file) {
  m_fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (m_fd < 0) throw std::runtime_error("cannot create " + lock_file.string());
  if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t n = ::pread(m_fd, pid, sizeof pid - 1, 0);
    ::close(m_fd);
    m_fd = -1;
    throw RunLockedError(
        "run directory " + lock_file.parent_path().string() + " is in use by another trainer" +
        (n > 0 ? " (pid " + std::string(pid, static_cast<std::size_t>(n)) + ")" : ""));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(m_fd, 0) == 0) (void)!::pwrite(m_fd, pid.data(), pid.size(), 0);
}

RunLock::~RunLock() {
  if (m_fd >= 0) ::close(m_fd);
}

bool isRunLocked(const std::filesystem::path& lock_file) {
  // Read-write where allowed: on NFS, flock is emulated with POSIX locks, and an exclusive one
  // needs a descriptor open for writing. Nothing is written.
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fd = ::open(lock_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;
  bool locked = false;
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
  } else {
    locked = errno == EWOULDBLOCK;
  }
  ::close(fd);
  return locked;
}

}  // namespace tb::core
