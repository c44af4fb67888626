#pragma once
// POSIX descriptor helpers shared by the file code of core and the trainer (safetensors, the
// file tail, metrics, atomic files, the event stream, the launcher's pipes): an owning
// descriptor, and reads and writes that retry when a signal interrupts them. Linux only.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tb::core {

/// Owns a descriptor (-1: none) and closes it on every path out.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : m_fd(fd) {}
  ~FileDescriptor() {
    if (m_fd >= 0) ::close(m_fd);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return m_fd; }
  bool valid() const { return m_fd >= 0; }
  /// Closes now and reports close()'s result: on some file systems a failed write shows only here.
  bool close() {
    const int fd = m_fd;
    m_fd = -1;
    return ::close(fd) == 0;
  }

 private:
  int m_fd;
};

/// pread that retries on EINTR: bytes read, 0 at the end, -1 on error (errno set).
inline ssize_t readAt(int fd, char* buffer, std::size_t size, std::uint64_t offset) {
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, size, static_cast<off_t>(offset));
    if (n >= 0 || errno != EINTR) return n;
  }
}

/// Writes every byte, retrying on EINTR; false on an error (errno set: a full disk, a closed
/// pipe) or a write that makes no progress.
inline bool writeAll(int fd, std::string_view bytes) {
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace tb::core
