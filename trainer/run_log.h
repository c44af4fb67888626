#pragma once
// The trainer's human log: what a person reads (stderr and logs/rank_<r>.log), never parsed by
// the window, which reads events and files instead.

#include <filesystem>
#include <memory>
#include <string>

namespace spdlog {
class logger;
}

namespace tb::trainer {

/// One rank's human log through spdlog: each line to stderr, prefixed "[tokenbench-trainer] "
/// (or "[tokenbench-trainer rank R] " in a distributed run), and appended with its time to
/// `<logs>/rank_<R>.log` (opened close-on-exec; flushed at every line, so a killed process
/// loses nothing it logged). A log folder that cannot be made leaves stderr only.
class RunLog {
 public:
  RunLog(const std::filesystem::path& logs, int rank, bool distributed);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  void operator()(const std::string& text) const;

 private:
  std::shared_ptr<spdlog::logger> m_logger;
};

}  // namespace tb::trainer
