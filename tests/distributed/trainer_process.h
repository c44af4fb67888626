#pragma once
// Real tokenbench-trainer processes for the multi-process tests (distributed, sharded,
// reliability): a process with its stdout and stderr in files, a run trained to its end, and
// what can be read of a run while it goes on. Torch-free.

#include "core/config_io.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "core/run_config.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace tb::trainer::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// A trainer process started with extra environment variables, stdout and stderr in files;
/// `exe` is the trainer to run (default: this build's).
class TrainerProcess {
 public:
  TrainerProcess(const std::vector<std::string>& args, const fs::path& out,
                 const std::map<std::string, std::string>& env = {},
                 const std::string& exe = TB_TRAINER_EXE)
      : m_out(out) {
    std::vector<std::string> words{exe};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<std::string> vars;
    for (char** e = environ; *e != nullptr; ++e) vars.emplace_back(*e);
    for (const auto& [k, v] : env) vars.push_back(k + "=" + v);
    std::vector<char*> argv, envp;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    const std::string stdout_file = out.string() + ".stdout",
                      stderr_file = out.string() + ".stderr";
    std::fflush(nullptr);  // or the child flushes this process's buffered output a second time
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

inline fs::path writeConfig(const core::RunConfig& config, const fs::path& file) {
  std::ofstream(file) << core::toJsonText(config);
  return file;
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
inline std::vector<T> eventsOf(const std::vector<core::Event>& all) {
  std::vector<T> out;
  for (const auto& e : all) {
    if (const auto* t = std::get_if<T>(&e)) out.push_back(*t);
  }
  return out;
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

// Waits for "started rank R of N (pid P)" on the launcher's stderr.
inline std::optional<pid_t> startedRankPid(const TrainerProcess& launcher, int rank,
                                           std::chrono::seconds limit) {
  const auto end = Clock::now() + limit;
  const std::regex started("started rank " + std::to_string(rank) +
                           " of [0-9]+ \\(pid ([0-9]+)\\)");
  while (Clock::now() < end) {
    std::smatch m;
    const std::string text = launcher.stderrText();
    if (std::regex_search(text, m, started)) return static_cast<pid_t>(std::stoi(m[1]));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

/// A two-rank ddp run of `config` under the trainer's own launcher, training for as long as it
/// is let (max_steps 100000), in `dir`/run: the launcher, and the pid of rank `rank` once the
/// metrics reached step 3 (nullopt, the failure added, when that did not happen).
struct TwoRankJob {
  std::unique_ptr<TrainerProcess> launcher;
  std::optional<pid_t> rank_pid;
};

inline TwoRankJob startTwoRankJob(core::RunConfig config, const fs::path& dir, int rank) {
  config.distributed.strategy = core::Strategy::Ddp;
  config.distributed.nproc_per_node = 2;
  config.train.max_steps = 100000;
  const fs::path run = dir / "run";
  TwoRankJob job;
  job.launcher = std::make_unique<TrainerProcess>(
      std::vector<std::string>{"train", "--config", writeConfig(config, dir / "c.json").string(),
                               "--run-dir", run.string()},
      dir / "launcher");
  job.rank_pid = rankPid(run, rank, std::chrono::seconds(120));
  if (job.rank_pid && !reachesStep(run, 3, std::chrono::seconds(120))) {
    ADD_FAILURE() << "the job did not reach step 3:\n" << job.launcher->stderrText();
    job.rank_pid.reset();
  }
  return job;
}

}  // namespace tb::trainer::testing
