#pragma once
// What tells a training run to stop or checkpoint: SIGINT/SIGTERM, and the front end's control
// lines on stdin (`--control-stdin`).

#include "trainer/training/training_run.h"

#include <atomic>
#include <thread>

namespace tb::trainer::cli {

/// Feeds a RunControl from SIGINT/SIGTERM and, when asked, from the control lines on stdin (the
/// end of stdin means the front end is gone: stop). The signal handler only sets a lock-free
/// flag; a thread this object owns polls it and stdin every 50 ms and is joined by the
/// destructor, so nothing outlives the RunControl it writes to. One at a time per process.
class ControlChannel {
 public:
  ControlChannel(RunControl& control, bool read_stdin);
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

 private:
  void run();
  void handleLine(const std::string& line);

  RunControl& m_control;
  const bool m_read_stdin;
  std::atomic<bool> m_quit{false};
  std::thread m_thread;
};

}  // namespace tb::trainer::cli
