// Distributed training across real OS processes: the trainer's own launcher
// (distributed.nproc_per_node), an outside launcher's environment (torchrun, mpirun variables set
// here), DDP against one process with the same global batch, ZeRO-1 against DDP, checkpoints at
// another world size, and a rank killed mid-run.
#include "core/config_io.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "core/run_config.h"
#include "tests/distributed/run_weights.h"
#include "tests/distributed/trainer_process.h"
#include "tests/trainer/test_support.h"
#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::events;
using testing::eventsOf;
using testing::finalWeights;
using testing::freePort;
using testing::kSameBatchTolerance;
using testing::maxDifference;
using testing::rankPid;
using testing::reachesStep;
using testing::startedRankPid;
using testing::startTwoRankJob;
using testing::TempFolder;
using testing::tinyRunConfig;
using testing::TrainerProcess;
using testing::trainRun;
using testing::writeConfig;

TEST(Distributed, TwoRanksWithHalfTheBatchMatchOneRank) {
  TempFolder dir;
  core::RunConfig one = tinyRunConfig();
  one.train.batch_size = 4;
  core::RunConfig two = tinyRunConfig();
  two.train.batch_size = 2;
  two.distributed.strategy = core::Strategy::Ddp;
  two.distributed.nproc_per_node = 2;
  two.distributed.bucket_mb = 0.001;  // several buckets, launched during backward
  ASSERT_EQ(trainRun(one, dir.path(), "one"), 0);
  ASSERT_EQ(trainRun(two, dir.path(), "two"), 0);
  const auto a = finalWeights(dir.path() / "one", 4);
  const auto b = finalWeights(dir.path() / "two", 4);
  const double diff = maxDifference(a, b);
  EXPECT_LT(diff, kSameBatchTolerance);
  // And training moved the weights by far more than that (the comparison is not vacuous).
  TempFolder init;
  core::RunConfig zero_steps = one;
  zero_steps.train.max_steps = 1;
  zero_steps.train.lr = 1e-12;
  ASSERT_EQ(trainRun(zero_steps, init.path(), "init"), 0);
  EXPECT_GT(maxDifference(a, finalWeights(init.path() / "init", 1)), 100 * kSameBatchTolerance);

  // Both ranks' logs exist, and the hello event says how the run was launched.
  EXPECT_TRUE(fs::exists(dir.path() / "two" / "logs" / "rank_1.log"));
  const auto hello = eventsOf<core::HelloEvent>(
      events(TrainerProcess::slurp(dir.path() / "two" / "events.jsonl")));
  ASSERT_FALSE(hello.empty());
  EXPECT_EQ(hello.front().world_size, 2);
  EXPECT_EQ(hello.front().launcher, "local");
  EXPECT_EQ(hello.front().threads, 1);
}

TEST(Distributed, Zero1UpdatesExactlyLikeDdpAndItsCheckpointLoadsOnOneRank) {
  TempFolder dir;
  core::RunConfig ddp = tinyRunConfig();
  ddp.distributed.strategy = core::Strategy::Ddp;
  ddp.distributed.nproc_per_node = 2;
  ddp.train.checkpoint_every = 2;
  core::RunConfig zero1 = ddp;
  zero1.distributed.strategy = core::Strategy::Zero1;
  ASSERT_EQ(trainRun(ddp, dir.path(), "ddp"), 0);
  ASSERT_EQ(trainRun(zero1, dir.path(), "zero1"), 0);
  EXPECT_EQ(
      maxDifference(finalWeights(dir.path() / "ddp", 4), finalWeights(dir.path() / "zero1", 4)),
      0.0);
  // Rank 0 gathered the shards: the optimizer state on disk is the same whole state.
  const auto ddp_state = finalWeights(dir.path() / "ddp", 4, "optimizer.safetensors");
  const auto zero1_state = finalWeights(dir.path() / "zero1", 4, "optimizer.safetensors");
  EXPECT_GT(ddp_state.size(), 10u);
  EXPECT_EQ(maxDifference(ddp_state, zero1_state), 0.0);

  // The ZeRO-1 checkpoint of step 2, resumed by one process, continues where two left off.
  const fs::path resumed = dir.path() / "resumed";
  fs::create_directories(resumed / "checkpoints");
  fs::copy(dir.path() / "zero1" / "checkpoints" / "step_2", resumed / "checkpoints" / "step_2",
           fs::copy_options::recursive);
  core::RunConfig single = zero1;
  single.distributed.strategy = core::Strategy::None;
  single.distributed.nproc_per_node = 1;
  single.train.batch_size = 4;  // the same global batch
  fs::copy_file(writeConfig(single, dir.path() / "single.json"), resumed / "config.json");
  TrainerProcess p({"train", "--run-dir", resumed.string(), "--resume"}, dir.path() / "resume");
  ASSERT_EQ(p.wait(std::chrono::seconds(300)).value_or(-1), 0) << p.stderrText();
  EXPECT_NE(p.stderrText().find("resumed from checkpoints/step_2"), std::string::npos)
      << p.stderrText();
  EXPECT_LT(maxDifference(finalWeights(resumed, 4), finalWeights(dir.path() / "zero1", 4)),
            kSameBatchTolerance);
}

TEST(Distributed, KillingOneRankEndsTheOthersWithAnErrorNamingItAndTheRunResumes) {
  TempFolder dir;
  core::RunConfig config = tinyRunConfig();
  config.distributed.strategy = core::Strategy::Ddp;
  config.distributed.nproc_per_node = 2;
  config.distributed.timeout_s = 10;
  config.train.max_steps = 100000;
  config.train.checkpoint_every = 3;
  const fs::path run = dir.path() / "run";
  TrainerProcess launcher({"train", "--config", writeConfig(config, dir.path() / "c.json").string(),
                           "--run-dir", run.string()},
                          dir.path() / "launcher");
  const auto victim = rankPid(run, 1, std::chrono::seconds(120));
  ASSERT_TRUE(victim) << launcher.stderrText();
  ASSERT_TRUE(reachesStep(run, 4, std::chrono::seconds(120))) << launcher.stderrText();
  ASSERT_EQ(::kill(*victim, SIGKILL), 0);
  const auto killed_at = Clock::now();
  const auto code = launcher.wait(std::chrono::seconds(config.distributed.timeout_s + 10));
  ASSERT_TRUE(code) << "the run did not end within timeout_s + 10 s of the kill";
  const double took = std::chrono::duration<double>(Clock::now() - killed_at).count();
  EXPECT_LT(took, config.distributed.timeout_s);
  EXPECT_EQ(*code, 1);
  const auto all = events(launcher.stdoutText());
  const auto errors = eventsOf<core::ErrorEvent>(all);
  ASSERT_EQ(errors.size(), 1u) << launcher.stdoutText();
  EXPECT_EQ(errors[0].code, "rank_failed");
  EXPECT_NE(errors[0].message.find("rank 1 (pid " + std::to_string(*victim) +
                                   ") was killed by signal 9 (SIGKILL)"),
            std::string::npos)
      << errors[0].message;
  const auto done = eventsOf<core::DoneEvent>(all);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, "failed");

  // Resume with both ranks: it starts from the newest checkpoint and finishes.
  const auto steps = core::RunDirectory(run).listCheckpointSteps();
  ASSERT_FALSE(steps.empty());
  TrainerProcess resumed({"train", "--run-dir", run.string(), "--resume", "--set",
                          "train.max_steps=" + std::to_string(steps.back() + 2)},
                         dir.path() / "resumed");
  ASSERT_EQ(resumed.wait(std::chrono::seconds(300)).value_or(-1), 0) << resumed.stderrText();
  const auto resumed_events = events(resumed.stdoutText());
  ASSERT_FALSE(eventsOf<core::DoneEvent>(resumed_events).empty());
  EXPECT_EQ(eventsOf<core::DoneEvent>(resumed_events).back().status, "completed");
  EXPECT_EQ(eventsOf<core::DoneEvent>(resumed_events).back().step, steps.back() + 2);
}

// Inodes of the sockets process `pid` holds.
std::vector<std::string> socketInodes(pid_t pid) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const std::string target = fs::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0) out.push_back(target.substr(8, target.size() - 9));
  }
  return out;
}

// Local addresses of the listening TCP sockets among `inodes`, as /proc/net/tcp{,6} spell them
// (hex, 32-bit words in host order: "0100007F:9C40" is 127.0.0.1:40000).
std::vector<std::string> listeningAddresses(const std::vector<std::string>& inodes) {
  std::vector<std::string> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::istringstream in(TrainerProcess::slurp(table));
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      if (state == "0A" && std::find(inodes.begin(), inodes.end(), inode) != inodes.end())
        out.push_back(local);
    }
  }
  return out;
}

bool isLoopbackAddress(const std::string& local) {
  const std::string host = local.substr(0, local.find(':'));
  if (host.size() == 8) return host.substr(6, 2) == "7F";  // 127.x.x.x
  return host == "00000000000000000000000001000000" ||     // ::1
         (host.substr(0, 24) == "0000000000000000FFFF0000" &&
          host.substr(30, 2) == "7F");  // ::ffff:127.x
}

// The c10d store of a one-node run listened on every interface, unauthenticated: anyone on the
// network could write rendezvous keys. Every socket the launcher and its ranks listen on must be
// on loopback.
TEST(Distributed, AOneNodeRunListensOnLoopbackOnly) {
  TempFolder dir;
  core::RunConfig config = tinyRunConfig();
  config.distributed.strategy = core::Strategy::Ddp;
  config.distributed.nproc_per_node = 2;
  config.train.max_steps = 100000;
  const fs::path run = dir.path() / "run";
  TrainerProcess launcher({"train", "--config", writeConfig(config, dir.path() / "c.json").string(),
                           "--run-dir", run.string()},
                          dir.path() / "launcher");
  const auto rank0 = rankPid(run, 0, std::chrono::seconds(120));
  const auto rank1 = rankPid(run, 1, std::chrono::seconds(120));
  ASSERT_TRUE(rank0 && rank1) << launcher.stderrText();
  ASSERT_TRUE(reachesStep(run, 2, std::chrono::seconds(120))) << launcher.stderrText();
  std::vector<std::string> inodes;
  for (pid_t pid : {launcher.pid(), *rank0, *rank1}) {
    const auto held = socketInodes(pid);
    inodes.insert(inodes.end(), held.begin(), held.end());
  }
  const auto listening = listeningAddresses(inodes);
  ::kill(launcher.pid(), SIGTERM);
  EXPECT_EQ(launcher.wait(std::chrono::seconds(60)).value_or(-1), 0) << launcher.stderrText();
  // The ranks' Gloo connections are among these sockets: the scan sees what the processes hold.
  EXPECT_GE(inodes.size(), 2u) << "no sockets found: the check would be vacuous";
  for (const auto& local : listening)
    EXPECT_TRUE(isLoopbackAddress(local)) << "listening on " << local;
  // The store lived in a private folder, removed with the run.
  const std::regex store_line("store (/[^ ]*tokenbench-store-[^/ ]*)/store");
  std::smatch m;
  const std::string log = TrainerProcess::slurp(run / "logs" / "rank_0.log");
  ASSERT_TRUE(std::regex_search(log, m, store_line)) << log;
  EXPECT_FALSE(fs::exists(m[1].str()));
}

// The one error event of a launcher's stdout.
std::string launcherError(const TrainerProcess& launcher) {
  const auto errors = eventsOf<core::ErrorEvent>(events(launcher.stdoutText()));
  EXPECT_EQ(errors.size(), 1u) << launcher.stdoutText();
  return errors.empty() ? std::string() : errors[0].code + ": " + errors[0].message;
}

// A rank that died during the rendezvous was reported as "rank 0 ... killed by signal 9": the
// signal the launcher itself had sent rank 0 when it would not end. Here rank 0 is also stopped,
// so the launcher has to kill it: the cause stays rank 1.
TEST(Distributed, ARankKilledDuringTheRendezvousIsNamedNotTheOneTheLauncherKilled) {
  TempFolder dir;
  core::RunConfig config = tinyRunConfig();
  config.distributed.strategy = core::Strategy::Ddp;
  config.distributed.nproc_per_node = 2;
  config.distributed.timeout_s = 8;
  TrainerProcess launcher({"train", "--config", writeConfig(config, dir.path() / "c.json").string(),
                           "--run-dir", (dir.path() / "run").string()},
                          dir.path() / "launcher");
  const auto rank0 = startedRankPid(launcher, 0, std::chrono::seconds(60));
  const auto rank1 = startedRankPid(launcher, 1, std::chrono::seconds(60));
  ASSERT_TRUE(rank0 && rank1) << launcher.stderrText();
  ASSERT_EQ(::kill(*rank1, SIGKILL), 0);
  ASSERT_EQ(::kill(*rank0, SIGSTOP), 0);
  const auto code = launcher.wait(std::chrono::seconds(3 * config.distributed.timeout_s));
  ASSERT_TRUE(code) << "the launcher did not end";
  EXPECT_EQ(*code, 1);
  const std::string error = launcherError(launcher);
  EXPECT_EQ(error, "rank_failed: rank 1 (pid " + std::to_string(*rank1) +
                       ") was killed by signal 9 (SIGKILL)")
      << launcher.stderrText();
}

// A stopped (SIGSTOP) rank kept the job alive for 2 x timeout_s + 5 s, and a stopped rank 0 was
// reported only as "killed by signal 9". The job ends within timeout_s of the stop, naming it.
TEST(Distributed, AStoppedRankEndsTheJobWithinTimeoutAndIsNamed) {
  for (int victim : {1, 0}) {
    TempFolder dir;
    core::RunConfig config = tinyRunConfig();
    config.distributed.timeout_s = 8;
    const auto job = startTwoRankJob(config, dir.path(), victim);
    TrainerProcess& launcher = *job.launcher;
    const std::optional<pid_t> pid = job.rank_pid;
    ASSERT_TRUE(pid) << launcher.stderrText();
    ASSERT_EQ(::kill(*pid, SIGSTOP), 0);
    const auto stopped_at = Clock::now();
    const auto code = launcher.wait(std::chrono::seconds(3 * config.distributed.timeout_s));
    ASSERT_TRUE(code) << "rank " << victim << " stopped: the launcher did not end";
    const double took = std::chrono::duration<double>(Clock::now() - stopped_at).count();
    EXPECT_LT(took, config.distributed.timeout_s + 5) << "rank " << victim;
    EXPECT_EQ(*code, 1);
    const std::string error = launcherError(launcher);
    EXPECT_EQ(error.rfind("rank_failed: rank " + std::to_string(victim) + " (pid " +
                              std::to_string(*pid) +
                              ") stopped responding: it was stopped (SIGSTOP) for 8 s, and the "
                              "launcher killed it",
                          0),
              0u)
        << error;
    std::cerr << "rank " << victim << " stopped: the job ended " << took << " s later\n";
  }
}

// Ranks started by an outside launcher: the variables it sets, the store served by rank 0.
struct OutsideLauncher {
  std::string name;
  std::map<std::string, std::string> rank0, rank1;
};

std::vector<OutsideLauncher> outsideLaunchers(int port) {
  const std::map<std::string, std::string> master = {{"MASTER_ADDR", "127.0.0.1"},
                                                     {"MASTER_PORT", std::to_string(port)}};
  auto with = [&](std::map<std::string, std::string> vars) {
    vars.insert(master.begin(), master.end());
    return vars;
  };
  return {
      {"torchrun",
       with({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "2"}}),
       with({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}})},
      {"mpirun",
       with({{"OMPI_COMM_WORLD_RANK", "0"},
             {"OMPI_COMM_WORLD_SIZE", "2"},
             {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
             {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
       with({{"OMPI_COMM_WORLD_RANK", "1"},
             {"OMPI_COMM_WORLD_SIZE", "2"},
             {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
             {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}})},
      {"slurm",
       with({{"SLURM_PROCID", "0"},
             {"SLURM_NTASKS", "2"},
             {"SLURM_LOCALID", "0"},
             {"SLURM_STEP_ID", "0"},
             {"SLURM_TASKS_PER_NODE", "2"},
             {"SLURM_JOB_NODELIST", "localhost"}}),
       with({{"SLURM_PROCID", "1"},
             {"SLURM_NTASKS", "2"},
             {"SLURM_LOCALID", "1"},
             {"SLURM_STEP_ID", "0"},
             {"SLURM_TASKS_PER_NODE", "2"},
             {"SLURM_JOB_NODELIST", "localhost"}})},
  };
}

TEST(Distributed, OutsideLaunchersAreRecognisedAndTrain) {
  for (const auto& launcher : outsideLaunchers(freePort())) {
    TempFolder dir;
    core::RunConfig config = tinyRunConfig();
    config.distributed.strategy = core::Strategy::Ddp;
    config.train.max_steps = 2;
    const fs::path file = writeConfig(config, dir.path() / "c.json");
    const std::vector<std::string> args = {"train", "--config", file.string(), "--run-dir",
                                           (dir.path() / "run").string()};
    TrainerProcess r0(args, dir.path() / "r0", launcher.rank0);
    TrainerProcess r1(args, dir.path() / "r1", launcher.rank1);
    EXPECT_EQ(r0.wait(std::chrono::seconds(300)).value_or(-1), 0) << launcher.name << "\n"
                                                                  << r0.stderrText();
    EXPECT_EQ(r1.wait(std::chrono::seconds(60)).value_or(-1), 0) << launcher.name << "\n"
                                                                 << r1.stderrText();
    const auto all = events(r0.stdoutText());
    const auto hello = eventsOf<core::HelloEvent>(all);
    ASSERT_EQ(hello.size(), 1u) << launcher.name;
    EXPECT_EQ(hello[0].launcher, launcher.name);
    EXPECT_EQ(hello[0].world_size, 2);
    EXPECT_EQ(eventsOf<core::DoneEvent>(all).back().status, "completed") << launcher.name;
    EXPECT_TRUE(r1.stdoutText().empty()) << launcher.name << ": rank 1 wrote events";
  }
}

TEST(Distributed, UnderTorchrunARankThatDiesIsNamedByTheOthers) {
  TempFolder dir;
  const auto launcher = outsideLaunchers(freePort()).front();
  core::RunConfig config = tinyRunConfig();
  config.distributed.strategy = core::Strategy::Ddp;
  config.distributed.timeout_s = 10;
  config.train.max_steps = 100000;
  const fs::path run = dir.path() / "run";
  const std::vector<std::string> args = {"train", "--config",
                                         writeConfig(config, dir.path() / "c.json").string(),
                                         "--run-dir", run.string()};
  TrainerProcess r0(args, dir.path() / "r0", launcher.rank0);
  TrainerProcess r1(args, dir.path() / "r1", launcher.rank1);
  ASSERT_TRUE(reachesStep(run, 3, std::chrono::seconds(120))) << r0.stderrText();
  ASSERT_EQ(::kill(r1.pid(), SIGKILL), 0);
  const auto killed_at = Clock::now();
  const auto code = r0.wait(std::chrono::seconds(config.distributed.timeout_s + 10));
  ASSERT_TRUE(code) << "rank 0 still running";
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - killed_at).count(),
            config.distributed.timeout_s);
  EXPECT_EQ(*code, 1);
  const auto errors = eventsOf<core::ErrorEvent>(events(r0.stdoutText()));
  ASSERT_EQ(errors.size(), 1u) << r0.stdoutText();
  EXPECT_EQ(errors[0].code, "rank_failed");
  EXPECT_NE(errors[0].message.find("rank 1 stopped responding"), std::string::npos)
      << errors[0].message;
}

}  // namespace
}  // namespace tb::trainer
