#include "trainer/event_sink.h"

#include "core/posix_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <fcntl.h>

#include <unistd.h>

namespace tb::trainer {

using core::writeAll;

bool appendWholeLines(int fd, const std::string& lines) {
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (writeAll(fd, lines)) return true;
  // Shrinking needs no space: what a full disk let through goes again.
  if (end >= 0) (void)!::ftruncate(fd, end);
  return false;
}

void dropUnterminatedLine(int fd) {
  const off_t end = ::lseek(fd, 0, SEEK_END);
  char buf[4096];
  off_t keep = end;
  while (keep > 0) {
    const off_t from = std::max<off_t>(0, keep - static_cast<off_t>(sizeof buf));
    const ssize_t n = ::pread(fd, buf, static_cast<std::size_t>(keep - from), from);
    if (n != keep - from) return;  // unreadable: leave the file as it is
    const void* newline = ::memrchr(buf, '\n', static_cast<std::size_t>(n));
    if (newline != nullptr) {
      keep = from + (static_cast<const char*>(newline) - buf) + 1;
      break;
    }
    keep = from;
  }
  if (keep != end) (void)!::ftruncate(fd, keep);
}

EventSink::EventSink(int fd, bool enabled) : m_fd(fd), m_enabled(enabled) {}

EventSink::EventSink(EventSink&& other) noexcept
    : m_fd(other.m_fd),
      m_file_fd(std::exchange(other.m_file_fd, -1)),
      m_before_file(std::move(other.m_before_file)),
      m_enabled(other.m_enabled) {}

EventSink::~EventSink() {
  if (m_file_fd >= 0) ::close(m_file_fd);
}

bool EventSink::alsoAppendTo(const std::string& file) {
  if (!m_enabled) return true;
  // Read access too: the last line is checked before anything is appended.
  // Never through a link planted where the file goes.
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return false;
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_file_fd >= 0) ::close(m_file_fd);
  m_file_fd = fd;
  dropUnterminatedLine(m_file_fd);
  (void)appendWholeLines(m_file_fd, m_before_file);
  m_before_file.clear();
  return true;
}

EventSink EventSink::claimStdout(bool enabled) {
  std::fflush(stdout);
  // Close-on-exec like every descriptor the trainer opens: a launched rank must not inherit it.
  const int events = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
  if (events < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    throw std::runtime_error("cannot set up the event stream on stdout");
  }
  return EventSink(events, enabled);
}

bool EventSink::emit(const core::Event& event) {
  if (!m_enabled) return true;
  std::string line = core::encodeEvent(event);
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_file_fd >= 0) {
    (void)appendWholeLines(m_file_fd, line);  // a full disk must not stop the stream
  } else {
    m_before_file += line;
  }
  return writeAll(m_fd, line);
}

}  // namespace tb::trainer
