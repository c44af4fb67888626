#pragma once
// Helpers for tests that run real tokenbench-trainer processes (multi-process distributed runs,
// CUDA checks): a process with its own environment and captured output, configuration files,
// a tiny training configuration, final weights of a run and their differences, events of an
// output, what can be read of a run while it goes on, a free loopback port.

#include "core/config_io.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "core/run_config.h"
#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace tb::trainer::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// A trainer process started with extra environment variables, stdout and stderr in files.
class TrainerProcess {
 public:
  TrainerProcess(const std::vector<std::string>& args, const fs::path& out,
                 const std::map<std::string, std::string>& env = {})
      : m_out(out) {
    std::vector<std::string> words{TB_TRAINER_EXE};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<std::string> vars;
    for (char** e = environ; *e != nullptr; ++e) vars.emplace_back(*e);
    for (const auto& [k, v] : env) vars.push_back(k + "=" + v);
    std::vector<char*> argv, envp;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    const std::string stdout_file = out.string() + ".stdout", stderr_file = out.string() + ".stderr";
    m_pid = ::fork();
    if (m_pid == 0) {
      std::freopen(stdout_file.c_str(), "w", stdout);
      std::freopen(stderr_file.c_str(), "w", stderr);
      std::freopen("/dev/null", "r", stdin);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
  }
  ~TrainerProcess() {
    if (m_pid > 0 && !m_status) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
  }

  /// Exit status, or nullopt when it is still running after `limit`.
  std::optional<int> wait(std::chrono::seconds limit) {
    const auto end = Clock::now() + limit;
    while (!m_status) {
      int status = 0;
      if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
        m_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (Clock::now() > end) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return m_status;
  }
  pid_t pid() const { return m_pid; }
  std::string stdoutText() const { return slurp(m_out.string() + ".stdout"); }
  std::string stderrText() const { return slurp(m_out.string() + ".stderr"); }

  static std::string slurp(const fs::path& file) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  fs::path m_out;
  pid_t m_pid = -1;
  std::optional<int> m_status;
};

inline fs::path writeConfig(const core::RunConfig& config, const fs::path& file) {
  std::ofstream(file) << core::toJsonText(config);
  return file;
}

inline std::map<std::string, torch::Tensor> finalWeights(const fs::path& run, std::int64_t step,
                                                  const std::string& file = "model.safetensors") {
  std::map<std::string, torch::Tensor> out;
  for (auto& [name, t] : weights::loadTensors(run / "checkpoints" / ("step_" + std::to_string(step)) / file)) {
    out[name] = t;
  }
  return out;
}

inline double maxDifference(const std::map<std::string, torch::Tensor>& a, const std::map<std::string, torch::Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (const auto& [name, t] : a) {
    const auto it = b.find(name);
    if (it == b.end()) {
      ADD_FAILURE() << name << " missing";
      continue;
    }
    if (t.is_floating_point()) worst = std::max(worst, (t - it->second).abs().max().item<double>());
  }
  return worst;
}

inline std::vector<core::Event> events(const std::string& text) {
  std::vector<core::Event> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto decoded = core::decodeEventLine(line);
    EXPECT_TRUE(decoded.ok()) << line;
    if (decoded.ok()) out.push_back(*decoded.event());
  }
  return out;
}

template <class T>
std::vector<T> eventsOf(const std::vector<core::Event>& all) {
  std::vector<T> out;
  for (const auto& e : all) {
    if (const auto* t = std::get_if<T>(&e)) out.push_back(*t);
  }
  return out;
}

/// A tiny MAGVIT-v2 on procedural clips: reconstruction and LFQ losses only (no random frame
/// picks), no EMA, no validation, so runs differ only in how the batch is split.
inline core::RunConfig tinyRunConfig() {
  core::RunConfig c;
  c.data.image_size = 16;
  c.data.num_frames = 5;
  c.data.synthetic_clips = 64;
  c.data.workers = 1;
  c.model.init_dim = 8;
  c.model.max_dim = 16;
  c.model.layers = {{"residual", {}}, {"compress_space", {}}, {"compress_time", {}}};
  c.model.input_conv_kernel = {3, 3, 3};
  c.model.quantizer.codebook_size = 64;
  c.loss.adversarial_weight = 0;
  c.loss.perceptual_weight = 0;
  c.train.max_steps = 4;
  c.train.warmup_steps = 0;
  c.train.lr = 1e-3;
  c.train.weight_decay = 0.01;
  c.train.ema = false;
  c.train.valid_every = 0;
  c.train.sample_every = 0;
  c.train.log_every = 1;
  c.train.checkpoint_every = 0;
  c.train.threads = 1;
  c.distributed.timeout_s = 20;
  return c;
}

/// Trains `config` in `dir`/`name` to its end; the exit code (0 expected, a failure added
/// otherwise).
inline int trainRun(const core::RunConfig& config, const fs::path& dir, const std::string& name) {
  TrainerProcess p({"train", "--config", writeConfig(config, dir / (name + ".json")).string(),
                    "--run-dir", (dir / name).string()},
                   dir / name);
  const auto code = p.wait(std::chrono::seconds(300));
  EXPECT_TRUE(code.has_value()) << name << " still running after 300 s";
  EXPECT_EQ(code.value_or(-1), 0) << name << ":\n" << p.stderrText();
  return code.value_or(-1);
}

// Tolerance: the two runs sum the same per-sample gradients in a different order (two
// half-batch means averaged over the wire, against one mean), so float32 rounding differs by
// about 1e-7 relative per step; after 4 AdamW steps at lr 1e-3 parameters agree to 1e-5.
inline constexpr double kSameBatchTolerance = 1e-5;

// Reads "pid N" from a rank's log once the rank has written it.
inline std::optional<pid_t> rankPid(const fs::path& run, int rank, std::chrono::seconds limit) {
  const auto end = Clock::now() + limit;
  const std::regex pid_line("pid ([0-9]+)");
  while (Clock::now() < end) {
    std::smatch m;
    const std::string log =
        TrainerProcess::slurp(run / "logs" / ("rank_" + std::to_string(rank) + ".log"));
    if (std::regex_search(log, m, pid_line)) return static_cast<pid_t>(std::stoi(m[1]));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

// Waits until metrics.jsonl has a row with step >= `step`.
inline bool reachesStep(const fs::path& run, std::int64_t step, std::chrono::seconds limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    std::istringstream in(TrainerProcess::slurp(run / "metrics.jsonl"));
    for (std::string line; std::getline(in, line);) {
      if (const auto row = core::parseMetricsLine(line); row && row->step >= step) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

inline int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace tb::trainer::testing
