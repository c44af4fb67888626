#include "trainer/run_log.h"

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <system_error>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;

// Appends to a file opened close-on-exec (spdlog's own file sink uses fopen without it, so a
// rank the launcher starts would inherit it).
class AppendFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AppendFileSink(int fd) : m_fd(fd) {}
  ~AppendFileSink() override { ::close(m_fd); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    for (std::size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(m_fd, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // a full disk must not stop training; stderr still has the line
      done += static_cast<std::size_t>(n);
    }
  }
  void flush_() override {}  // every line is written through at once

 private:
  int m_fd;
};

}  // namespace

RunLog::RunLog(const fs::path& logs, int rank, bool distributed) {
  const std::string prefix = distributed ? "[tokenbench-trainer rank " + std::to_string(rank) + "] "
                                         : "[tokenbench-trainer] ";
  auto to_stderr = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  to_stderr->set_pattern(prefix + "%v");
  std::vector<spdlog::sink_ptr> sinks{to_stderr};
  std::error_code ec;
  fs::create_directories(logs, ec);
  const fs::path file = logs / ("rank_" + std::to_string(rank) + ".log");
  // Never through a link planted in the run directory (the run refuses it once it starts).
  const bool linked = fs::is_symlink(logs, ec);
  const int fd =
      linked ? -1
             : ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  const int open_error = linked ? ELOOP : errno;
  if (fd >= 0) {
    auto to_file = std::make_shared<AppendFileSink>(fd);
    to_file->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
    sinks.push_back(to_file);
  }
  m_logger =
      std::make_shared<spdlog::logger>("rank_" + std::to_string(rank), sinks.begin(), sinks.end());
  m_logger->set_level(spdlog::level::info);
  m_logger->flush_on(spdlog::level::info);
  if (fd < 0)
    m_logger->warn("cannot write {}: {}; logging to stderr only", file.string(),
                   std::strerror(open_error));
}

RunLog::~RunLog() = default;

void RunLog::operator()(const std::string& text) const { m_logger->info(text); }

}  // namespace tb::trainer
