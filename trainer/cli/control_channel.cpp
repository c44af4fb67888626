#include "trainer/cli/control_channel.h"

#include "core/control_message.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <iostream>
#include <string>

namespace tb::trainer::cli {
namespace {

// Written by the signal handler, read by the channel's thread: a lock-free atomic with static
// storage is what a handler may touch (a plain pointer to a RunControl was not).
std::atomic<bool> g_stop_signal{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void onStopSignal(int) { g_stop_signal.store(true, std::memory_order_relaxed); }

}  // namespace

ControlChannel::ControlChannel(RunControl& control, bool read_stdin)
    : m_control(control), m_read_stdin(read_stdin) {
  g_stop_signal.store(false);
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  m_thread = std::thread([this] { run(); });
}

ControlChannel::~ControlChannel() {
  m_quit.store(true);
  m_thread.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

void ControlChannel::handleLine(const std::string& line) {
  std::string error;
  const auto message = core::decodeControlLine(line, &error);
  if (message == core::ControlMessage::Stop) {
    m_control.stop.store(true);
  } else if (message == core::ControlMessage::Checkpoint) {
    m_control.checkpoint.store(true);
  } else {
    std::cerr << "tokenbench-trainer: ignoring control line (" << error
              << "): " << line.substr(0, 200) << "\n";
  }
}

void ControlChannel::run() {
  bool stdin_open = m_read_stdin;
  std::string pending;
  while (!m_quit.load()) {
    if (g_stop_signal.load(std::memory_order_relaxed)) m_control.stop.store(true);
    pollfd in{STDIN_FILENO, POLLIN, 0};
    const int ready = ::poll(&in, stdin_open ? 1 : 0, 50);
    if (ready <= 0 || !stdin_open) continue;  // timeout, EINTR (a signal): look at the flags
    char buffer[4096];
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {  // the end of stdin (or a broken one): the front end is gone
      stdin_open = false;
      m_control.stop.store(true);
      continue;
    }
    pending.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t end; (end = pending.find('\n')) != std::string::npos;) {
      handleLine(pending.substr(0, end));
      pending.erase(0, end + 1);
    }
  }
}

}  // namespace tb::trainer::cli
