#include "trainer/event_sink.h"

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace tb::trainer {

EventSink::EventSink(int fd, bool enabled) : m_fd(fd), m_enabled(enabled) {}

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
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(m_fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace tb::trainer
