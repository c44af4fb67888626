#pragma once
// Helpers for tests that run real tokenbench-trainer processes (multi-process distributed runs,
// CUDA checks): a process with its own environment and captured output, configuration files,
// final weights of a run and their differences, events of an output, a free loopback port.

#include "core/config_io.h"
#include "core/event_protocol.h"
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
