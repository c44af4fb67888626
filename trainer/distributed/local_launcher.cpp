#include "trainer/distributed/local_launcher.h"

#include "core/event_protocol.h"
#include "core/posix_io.h"
#include "trainer/distributed/store_server.h"
#include "trainer/event_sink.h"
#include "trainer/user_error.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>

extern char** environ;

namespace tb::trainer::distributed {
namespace {

// The reader of a pipe may be gone: the launcher keeps supervising, the files are the record.
using core::writeAll;

using Clock = std::chrono::steady_clock;

int g_signal_pipe[2] = {-1, -1};

void onSignal(int signal) {
  const unsigned char byte = static_cast<unsigned char>(signal);
  (void)!::write(g_signal_pipe[1], &byte, 1);
}

struct Rank {
  int rank = 0;
  pid_t pid = -1;
  int stdin_fd = -1;  ///< write end of the rank's stdin
  bool running = false;
  int status = 0;                  ///< waitpid status once ended
  int ended = 0;                   ///< 1 for the first rank to end, 2 for the next, ...
  std::uint64_t sent_signals = 0;  ///< bit s: this launcher sent it signal s (a stop, escalation)
  bool hung = false;               ///< killed by this launcher after being stopped for timeout_s
  std::optional<Clock::time_point> stopped_since;  ///< first seen stopped (SIGSTOP), if it is
};

// A rank's process state is 'T' while it is stopped (SIGSTOP, SIGTSTP): it neither works nor
// ends, and its peers can only time out on it.
bool isStopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'T';
}

// The folder of a one-node run's c10d FileStore: only this user may enter it; removed at the end.
class StoreFolder {
 public:
  StoreFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tokenbench-store-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw UserError(
          "rank_group_failed",
          "cannot create the ranks' store folder " + pattern + ": " + std::strerror(errno),
          "set TMPDIR to a writable folder");
    }
    m_folder = pattern;
  }
  ~StoreFolder() {
    std::error_code ec;
    std::filesystem::remove_all(m_folder, ec);
  }
  StoreFolder(const StoreFolder&) = delete;
  StoreFolder& operator=(const StoreFolder&) = delete;
  std::string file() const { return (m_folder / "store").string(); }

 private:
  std::filesystem::path m_folder;
};

std::string signalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return "signal " + std::to_string(signal) +
         (abbrev ? " (SIG" + std::string(abbrev) + ")" : std::string());
}

bool endedBadly(const Rank& r) {
  return !r.running &&
         (WIFSIGNALED(r.status) || (WIFEXITED(r.status) && WEXITSTATUS(r.status) != 0));
}

std::string describeEnding(const Rank& r, std::chrono::seconds timeout) {
  const std::string who = "rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.pid) + ")";
  if (r.hung) {
    return who + " stopped responding: it was stopped (SIGSTOP) for " +
           std::to_string(timeout.count()) + " s, and the launcher killed it";
  }
  if (WIFSIGNALED(r.status)) {
    const int sig = WTERMSIG(r.status);
    const bool crash =
        sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
    return who + (crash ? " crashed with " : " was killed by ") + signalName(sig);
  }
  return who + " exited with status " + std::to_string(WEXITSTATUS(r.status));
}

// After rank 0's own lines, the last of which it may have left unterminated when it died.
void appendToFile(const std::filesystem::path& file, const std::string& lines) {
  const int fd = ::open(file.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  dropUnterminatedLine(fd);
  (void)appendWholeLines(fd, lines);
  ::close(fd);
}

std::string selfExecutable() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot find this executable (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(n));
}

// Starts one rank. Everything after fork() is async-signal-safe: the argument and environment
// arrays are built before.
Rank spawnRank(const std::string& exe, const std::vector<std::string>& arguments,
               const std::vector<std::string>& environment, int rank, int stdout_fd) {
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> argv{const_cast<char*>(exe.c_str())};
  for (const auto& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);  // the launcher died before the line above
    ::dup2(in[0], 0);
    ::dup2(stdout_fd, 1);
    ::sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(exe.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(in[0]);
  Rank r;
  r.rank = rank;
  r.pid = pid;
  r.stdin_fd = in[1];
  r.running = true;
  return r;
}

}  // namespace

int runLocalLaunch(const LocalLaunch& launch) {
  const core::DistributedConfig& d = launch.config.distributed;
  const int nproc = d.nproc_per_node;
  const int world = nproc * d.nnodes;
  const auto timeout = std::chrono::seconds(d.timeout_s);

  // The store: a file in a private folder for one node (nothing listens on the network); for
  // several, Tokenbench's own store on master_addr:master_port, served by node 0.
  std::unique_ptr<StoreFolder> store_folder;
  std::unique_ptr<StoreServer> store;
  try {
    if (d.nnodes == 1) {
      store_folder = std::make_unique<StoreFolder>();
    } else if (d.node_rank == 0) {
      store = std::make_unique<StoreServer>(d.master_addr, d.master_port);
      std::cerr << "[tokenbench-trainer] the rendezvous store listens on " << store->listeningOn()
                << std::endl;
    }
  } catch (const UserError& e) {
    std::cerr << "tokenbench-trainer: error: " << e.what() << "\n";
    return 1;
  }

  // The ranks inherit the environment, with the variables that place them replaced.
  const std::vector<std::string> placement = {
      "TB_LAUNCHER", "RANK",        "WORLD_SIZE",  "LOCAL_RANK",   "LOCAL_WORLD_SIZE",
      "GROUP_RANK",  "MASTER_ADDR", "MASTER_PORT", "TB_STORE_FILE"};
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (std::find(placement.begin(), placement.end(), name) == placement.end())
      environment.push_back(entry);
  }
  environment.push_back("TB_LAUNCHER=local");
  environment.push_back("WORLD_SIZE=" + std::to_string(world));
  environment.push_back("LOCAL_WORLD_SIZE=" + std::to_string(nproc));
  environment.push_back("GROUP_RANK=" + std::to_string(d.node_rank));
  if (store_folder) {
    environment.push_back("TB_STORE_FILE=" + store_folder->file());
  } else {
    environment.push_back("MASTER_ADDR=" + d.master_addr);
    environment.push_back("MASTER_PORT=" + std::to_string(d.master_port));
  }

  if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::cerr << "tokenbench-trainer: error: pipe: " << std::strerror(errno) << "\n";
    return 1;
  }
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGCHLD}) ::sigaction(sig, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  const bool has_rank0 = d.node_rank == 0;
  int events_pipe[2] = {-1, -1};
  if (has_rank0 && ::pipe2(events_pipe, O_CLOEXEC) != 0) {
    std::cerr << "tokenbench-trainer: error: pipe: " << std::strerror(errno) << "\n";
    return 1;
  }
  const std::string exe = selfExecutable();
  std::vector<Rank> ranks;
  try {
    for (int local = 0; local < nproc; ++local) {
      const int rank = d.node_rank * nproc + local;
      std::vector<std::string> env = environment;
      env.push_back("RANK=" + std::to_string(rank));
      env.push_back("LOCAL_RANK=" + std::to_string(local));
      // Rank 0's stdout carries the events; the others print nothing there (stderr is shared).
      ranks.push_back(spawnRank(exe, launch.arguments, env, rank, rank == 0 ? events_pipe[1] : 2));
      std::cerr << "[tokenbench-trainer] started rank " << rank << " of " << world << " (pid "
                << ranks.back().pid << ")" << std::endl;
    }
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer: error: cannot start the ranks: " << e.what() << "\n";
    for (auto& r : ranks) ::kill(r.pid, SIGKILL);
    return 1;
  }
  if (has_rank0) ::close(events_pipe[1]);

  core::EventLineSplitter splitter;
  std::vector<std::string> held;  // rank 0's error and done lines
  std::string done_status;
  std::optional<Clock::time_point> deadline;  // set when the first rank ends badly
  int escalation = 0;                         // 0: none yet, 1: SIGTERM sent, 2: SIGKILL sent
  bool forwarded_stop = false;
  bool stdin_open = launch.control_stdin;
  std::string control_buffer;
  auto anyRunning = [&] {
    for (const auto& r : ranks) {
      if (r.running) return true;
    }
    return false;
  };
  auto signalAll = [&](int sig) {
    for (auto& r : ranks) {
      if (!r.running) continue;
      ::kill(r.pid, sig);
      r.sent_signals |= std::uint64_t{1} << sig;
    }
  };
  int ended = 0;
  auto relay = [&](const std::string& line) {
    const core::DecodeResult decoded = core::decodeEventLine(line);
    if (const core::Event* e = decoded.event()) {
      if (std::holds_alternative<core::ErrorEvent>(*e) ||
          std::holds_alternative<core::DoneEvent>(*e)) {
        if (const auto* done = std::get_if<core::DoneEvent>(e)) done_status = done->status;
        held.push_back(line);
        return;
      }
    }
    writeAll(1, line + "\n");
  };

  bool events_open = has_rank0;
  while (anyRunning() || events_open) {
    std::vector<pollfd> fds;
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    if (events_open) fds.push_back({events_pipe[0], POLLIN, 0});
    if (stdin_open) fds.push_back({0, POLLIN, 0});
    ::poll(fds.data(), fds.size(), 200);
    for (const auto& p : fds) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      if (p.fd == g_signal_pipe[0]) {
        unsigned char sigs[64];
        const ssize_t n = ::read(g_signal_pipe[0], sigs, sizeof sigs);
        for (ssize_t i = 0; i < n; ++i) {
          if ((sigs[i] == SIGINT || sigs[i] == SIGTERM) && !forwarded_stop) {
            std::cerr
                << "[tokenbench-trainer] stop requested: asking every rank to checkpoint and stop"
                << std::endl;
            signalAll(SIGTERM);
            forwarded_stop = true;
          }
        }
      } else if (p.fd == events_pipe[0]) {
        const ssize_t n = ::read(events_pipe[0], buf, sizeof buf);
        if (n <= 0) {
          events_open = false;
          if (auto last = splitter.flush()) relay(last->text);
          continue;
        }
        for (const auto& line : splitter.feed(std::string_view(buf, static_cast<std::size_t>(n)))) {
          if (!line.oversized) relay(line.text);
        }
      } else if (p.fd == 0) {
        const ssize_t n = ::read(0, buf, sizeof buf);
        if (n <= 0) {
          // The front end is gone: every rank reads the end of its stdin and stops.
          stdin_open = false;
          for (auto& r : ranks) {
            if (r.stdin_fd >= 0) ::close(r.stdin_fd);
            r.stdin_fd = -1;
          }
          continue;
        }
        control_buffer.append(buf, static_cast<std::size_t>(n));
        for (std::size_t end; (end = control_buffer.find('\n')) != std::string::npos;) {
          const std::string line = control_buffer.substr(0, end + 1);
          control_buffer.erase(0, end + 1);
          for (const auto& r : ranks) {
            if (r.running && r.stdin_fd >= 0) writeAll(r.stdin_fd, line);
          }
        }
      }
    }
    // Reap.
    int status = 0;
    for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
      for (auto& r : ranks) {
        if (r.pid != pid) continue;
        r.running = false;
        r.status = status;
        r.ended = ++ended;
        if (r.stdin_fd >= 0) ::close(r.stdin_fd);
        r.stdin_fd = -1;
        if (endedBadly(r)) {
          std::cerr << "[tokenbench-trainer] " << describeEnding(r, timeout) << std::endl;
          if (!deadline) deadline = Clock::now() + timeout;
        }
      }
    }
    // A stopped rank never ends by itself, and its peers can only time out on it: after
    // timeout_s it is killed, so the job ends within timeout_s of the stop, not twice that.
    for (auto& r : ranks) {
      if (!r.running || r.hung) continue;
      if (!isStopped(r.pid)) {
        r.stopped_since.reset();
      } else if (!r.stopped_since) {
        r.stopped_since = Clock::now();
      } else if (Clock::now() - *r.stopped_since >= timeout) {
        std::cerr << "[tokenbench-trainer] rank " << r.rank << " (pid " << r.pid
                  << ") has been stopped for " << d.timeout_s << " s: killing it" << std::endl;
        ::kill(r.pid, SIGKILL);
        r.hung = true;
      }
    }
    if (deadline && anyRunning() && Clock::now() >= *deadline) {
      if (escalation == 0) {
        std::cerr << "[tokenbench-trainer] ranks still running " << d.timeout_s
                  << " s after a rank failed: sending SIGTERM" << std::endl;
        signalAll(SIGTERM);
        escalation = 1;
        deadline = Clock::now() + std::chrono::seconds(5);
      } else if (escalation == 1) {
        std::cerr << "[tokenbench-trainer] sending SIGKILL" << std::endl;
        signalAll(SIGKILL);
        escalation = 2;
        deadline = Clock::now() + std::chrono::hours(24);
      }
    }
  }
  if (has_rank0) ::close(events_pipe[0]);

  // How it ended, the most telling cause first: a rank ended by a signal this launcher did not
  // send (killed from outside, crashed), the earliest such; then a rank it killed for being
  // stopped. Either is the cause even when rank 0 reports only the broken connection. Then rank
  // 0's own error, then a rank that exited with an error. Ranks this launcher ended (a stop, or
  // after another rank failed) are never the cause by that signal.
  std::vector<const Rank*> by_ending;
  for (const auto& r : ranks) by_ending.push_back(&r);
  std::sort(by_ending.begin(), by_ending.end(),
            [](const Rank* a, const Rank* b) { return a->ended < b->ended; });
  const Rank* culprit = nullptr;
  for (const Rank* r : by_ending) {
    if (!r->hung && WIFSIGNALED(r->status) && !((r->sent_signals >> WTERMSIG(r->status)) & 1)) {
      culprit = r;
      break;
    }
  }
  for (const Rank* r : by_ending) {
    if (!culprit && r->hung) culprit = r;
  }
  bool rank0_error_is_own = false;
  for (const auto& line : held) {
    const auto decoded = core::decodeEventLine(line);
    if (const auto* e = decoded.event(); e && std::holds_alternative<core::ErrorEvent>(*e)) {
      rank0_error_is_own = std::get<core::ErrorEvent>(*e).code != "rank_failed";
    }
  }
  if (!culprit && !rank0_error_is_own) {
    for (const Rank* r : by_ending) {
      if (endedBadly(*r) && r->rank != 0 && !WIFSIGNALED(r->status)) {
        culprit = r;
        break;
      }
    }
  }
  if (!culprit && has_rank0 && !ranks.empty() && endedBadly(ranks.front()) && held.empty())
    culprit = &ranks.front();

  const core::RunDirectory& run = launch.run;
  if (culprit && has_rank0) {
    std::string message = describeEnding(*culprit, timeout);
    for (const auto& line : held) {
      const auto decoded = core::decodeEventLine(line);
      if (const auto* e = decoded.event(); e && std::holds_alternative<core::ErrorEvent>(*e)) {
        message += "; rank 0: " + std::get<core::ErrorEvent>(*e).message;
      }
    }
    const std::string error =
        core::encodeEvent(core::ErrorEvent{
            "rank_failed", message, "the run resumes from its last checkpoint with --resume"}) +
        "\n";
    const std::string done = core::encodeEvent(core::DoneEvent{"failed", {}}) + "\n";
    writeAll(1, error + done);
    appendToFile(run.eventsFile(), error + done);
    std::cerr << "tokenbench-trainer: error: " << message << "\n";
    return 1;
  }
  for (const auto& line : held) writeAll(1, line + "\n");
  if (culprit) {
    std::cerr << "tokenbench-trainer: error: " << describeEnding(*culprit, timeout) << "\n";
    return 1;
  }
  for (const auto& r : ranks) {
    if (endedBadly(r)) return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 1;
  }
  if (has_rank0 && done_status.empty()) {
    std::cerr << "tokenbench-trainer: error: rank 0 ended without a done event\n";
    return 1;
  }
  return 0;
}

}  // namespace tb::trainer::distributed
