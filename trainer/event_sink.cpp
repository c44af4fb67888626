#include "trainer/event_sink.h"

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include <fcntl.h>

#include <unistd.h>

namespace tb::trainer {

namespace {

bool writeAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

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
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_file_fd >= 0) ::close(m_file_fd);
  m_file_fd = fd;
  (void)writeAll(m_file_fd, m_before_file);
  m_before_file.clear();
  return true;
}

EventSink EventSink::claimStdout(bool enabled) {
  std::fflush(stdout);
  const int events = ::dup(STDOUT_FILENO);
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
    (void)writeAll(m_file_fd, line);  // a full disk must not stop the stream
  } else {
    m_before_file += line;
  }
  return writeAll(m_fd, line);
}

}  // namespace tb::trainer
