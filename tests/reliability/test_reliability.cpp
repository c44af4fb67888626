// The reliability suite (issue 20): tokenbench-trainer probed as an unlucky cluster and a hostile
// input would, through the real binary. Every case asserts 0 crashes (no process ends by a signal
// it was not sent), 0 hangs (every process ends within its bound) and 0 silent state loss (a
// resume starts from the newest complete checkpoint, or fails naming the file it cannot use).
// Each case prints what it measured on a "reliability:" line. The full disk is full_disk.sh.
#include "core/config_io.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "core/run_directory.h"
#include "tests/distributed/trainer_process.h"
#include "tests/trainer/test_support.h"
#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::events;
using testing::eventsOf;
using testing::TempFolder;
using testing::TrainerProcess;
using testing::writeConfig;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// The multi-process tests' tiny MAGVIT-v2, with EMA, checkpointing at every step and keeping
/// the newest three: kills land inside checkpoint writes and retention often.
core::RunConfig tinyConfig() {
  core::RunConfig c = testing::tinyRunConfig();
  c.train.ema = true;
  c.train.ema_start_step = 0;
  c.train.checkpoint_every = 1;
  c.train.checkpoint_total_limit = 3;
  c.distributed.timeout_s = 8;
  return c;
}

bool endedBySignal(int code) { return code > 128; }

// "training N parameters from step S to T" on a trainer's stderr: S, once it is there.
std::optional<std::int64_t> startStep(const TrainerProcess& p) {
  static const std::regex line("parameters from step ([0-9]+) to");
  std::smatch m;
  const std::string text = p.stderrText();
  if (!std::regex_search(text, m, line)) return std::nullopt;
  return std::stoll(m[1]);
}

std::optional<std::int64_t> waitForStart(const TrainerProcess& p, std::chrono::seconds limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (auto s = startStep(p)) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

std::optional<std::int64_t> newestCheckpoint(const fs::path& run) {
  const auto steps = core::RunDirectory(run).listCheckpointSteps();
  if (steps.empty()) return std::nullopt;
  return steps.back();
}

// A checkpoint being written (or left half-written by a killed trainer).
bool checkpointInProgress(const fs::path& run) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run / "checkpoints", ec)) {
    if (entry.path().filename().string().rfind(".step_", 0) == 0) return true;
  }
  return false;
}

// Every line of a run's events.jsonl decodes (no line cut short, none glued to another).
void expectEveryEventLineDecodes(const fs::path& run) {
  std::istringstream in(TrainerProcess::slurp(core::RunDirectory(run).eventsFile()));
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    EXPECT_TRUE(core::decodeEventLine(line).ok())
        << "events.jsonl line " << lines + 1 << ": " << line;
  }
  EXPECT_GT(lines, 0);
}

// SIGKILL at random moments and while a checkpoint is being written, then resume, eight times:
// each resume must start from the newest checkpoint that was complete when the trainer died;
// every checkpoint left complete loads; the metrics hold each step once.
TEST(Reliability, SigkillAtAnyMomentResumesFromTheNewestCompleteCheckpoint) {
  const auto started = Clock::now();
  TempFolder dir;
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 200;
  const fs::path run = dir.path() / "run";
  const std::vector<std::string> args = {
      "train",     "--config",   writeConfig(config, dir.path() / "c.json").string(),
      "--run-dir", run.string(), "--resume"};
  std::mt19937 random(20);
  int kills = 0, mid_checkpoint = 0;
  std::int64_t expected = 0;  // the newest complete checkpoint when the last trainer died
  for (int round = 0; round < 8; ++round) {
    TrainerProcess trainer(args, dir.path() / ("round" + std::to_string(round)));
    const auto from = waitForStart(trainer, std::chrono::seconds(120));
    ASSERT_TRUE(from) << trainer.stderrText();
    EXPECT_EQ(*from, expected) << "round " << round << " resumed from the wrong step";
    if (round % 2 == 1) {
      // As soon as a checkpoint folder is being written.
      const auto end = Clock::now() + std::chrono::seconds(60);
      while (!checkpointInProgress(run) && Clock::now() < end)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    } else {
      // A random moment, but within a few steps of the start: a fast machine trains this tiny
      // model at ~100 steps a second and would otherwise finish all 200 before the kill.
      const auto end = Clock::now() + std::chrono::milliseconds(
                                          std::uniform_int_distribution<int>(50, 1500)(random));
      while (Clock::now() < end && newestCheckpoint(run).value_or(0) < *from + 12)
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    ASSERT_EQ(::kill(trainer.pid(), SIGKILL), 0);
    const auto code = trainer.wait(std::chrono::seconds(30));
    ASSERT_TRUE(code) << "a SIGKILLed trainer did not end";
    ASSERT_EQ(*code, 128 + SIGKILL) << "round " << round << " ended on its own:\n"
                                    << trainer.stderrText();
    ++kills;
    if (checkpointInProgress(run)) ++mid_checkpoint;
    expected = newestCheckpoint(run).value_or(0);
  }
  EXPECT_GE(mid_checkpoint, 1)
      << "no kill landed inside a checkpoint write: the case went untested";

  TrainerProcess last(args, dir.path() / "last");
  ASSERT_EQ(last.wait(std::chrono::seconds(240)).value_or(-1), 0) << last.stderrText();
  EXPECT_EQ(startStep(last).value_or(-1), expected);
  const auto done = eventsOf<core::DoneEvent>(events(last.stdoutText()));
  ASSERT_FALSE(done.empty());
  EXPECT_EQ(done.back().status, "completed");
  EXPECT_EQ(done.back().step, 200);

  int corrupt = 0, files = 0;
  for (const std::int64_t step : core::RunDirectory(run).listCheckpointSteps()) {
    for (const auto& entry : fs::directory_iterator(core::RunDirectory(run).checkpointDir(step))) {
      if (entry.path().extension() != ".safetensors") continue;
      ++files;
      try {
        EXPECT_FALSE(weights::loadTensors(entry.path()).empty()) << entry.path();
      } catch (const std::exception& e) {
        ++corrupt;
        ADD_FAILURE() << e.what();
      }
    }
  }
  EXPECT_GT(files, 0);
  std::vector<std::int64_t> logged;
  std::istringstream metrics(TrainerProcess::slurp(core::RunDirectory(run).metricsFile()));
  for (std::string line; std::getline(metrics, line);) {
    const auto row = core::parseMetricsLine(line);
    ASSERT_TRUE(row) << "metrics.jsonl: " << line;
    if (!row->values.empty() && row->values.front().first == "train/recon_loss")
      logged.push_back(row->step);
  }
  std::vector<std::int64_t> every(200);
  std::iota(every.begin(), every.end(), 1);
  EXPECT_EQ(logged, every) << "metrics.jsonl should hold each step once";
  expectEveryEventLineDecodes(run);
  std::cout << "reliability: sigkill: " << kills << " kills (" << mid_checkpoint
            << " mid-checkpoint), every resume from the newest complete checkpoint, " << corrupt
            << " of " << files << " checkpoint files corrupt, " << secondsSince(started) << " s"
            << std::endl;
}

// A dead or stopped rank ends a two-rank job within distributed.timeout_s, with an error naming
// it; the run then resumes on both ranks from its newest complete checkpoint.
TEST(Reliability, ADeadOrStoppedRankEndsTheJobWithinTimeoutNamingIt) {
  struct Fault {
    int rank;
    int signal;
    const char* named;
  };
  for (const Fault fault : {Fault{0, SIGKILL, "was killed by signal 9 (SIGKILL)"},
                            Fault{1, SIGSTOP, "stopped responding: it was stopped (SIGSTOP)"}}) {
    SCOPED_TRACE("rank " + std::to_string(fault.rank) + " signal " + std::to_string(fault.signal));
    TempFolder dir;
    core::RunConfig config = tinyConfig();
    config.train.checkpoint_every = 2;
    const fs::path run = dir.path() / "run";
    const auto job = testing::startTwoRankJob(config, dir.path(), fault.rank);
    TrainerProcess& launcher = *job.launcher;
    const std::optional<pid_t> pid = job.rank_pid;
    ASSERT_TRUE(pid) << launcher.stderrText();
    ASSERT_EQ(::kill(*pid, fault.signal), 0);
    const auto faulted = Clock::now();
    const auto code = launcher.wait(std::chrono::seconds(3 * config.distributed.timeout_s));
    ASSERT_TRUE(code) << "the job hung";
    const double took = secondsSince(faulted);
    EXPECT_LT(took, config.distributed.timeout_s + 5);
    EXPECT_EQ(*code, 1);
    const auto errors = eventsOf<core::ErrorEvent>(events(launcher.stdoutText()));
    ASSERT_EQ(errors.size(), 1u) << launcher.stdoutText();
    EXPECT_NE(errors[0].message.find("rank " + std::to_string(fault.rank) + " (pid " +
                                     std::to_string(*pid) + ") " + fault.named),
              std::string::npos)
        << errors[0].message;
    std::cout << "reliability: rank " << fault.rank
              << (fault.signal == SIGKILL ? " killed" : " stopped") << ": the job ended " << took
              << " s later (timeout_s " << config.distributed.timeout_s << ")" << std::endl;

    if (fault.signal != SIGKILL) continue;
    const std::int64_t newest = newestCheckpoint(run).value_or(0);
    TrainerProcess resumed({"train", "--run-dir", run.string(), "--resume", "--set",
                            "train.max_steps=" + std::to_string(newest + 2)},
                           dir.path() / "resumed");
    ASSERT_EQ(resumed.wait(std::chrono::seconds(120)).value_or(-1), 0) << resumed.stderrText();
    EXPECT_NE(resumed.stderrText().find("resumed from checkpoints/step_" + std::to_string(newest)),
              std::string::npos);
    expectEveryEventLineDecodes(run);
  }
}

// Mutations of a valid configuration: bytes flipped, spans cut or doubled, numbers pushed to
// extremes, values nested 100,000 deep. validate-config and train must exit 0 or 2, never crash
// or hang, and say what is wrong.
std::string mutate(std::string text, std::mt19937& random) {
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(random);
  };
  static const std::vector<std::string> extremes = {
      "1e308", "-1e308", "-1", "0",  "1e999", "99999999999999999999",
      "\"x\"", "null",   "[]", "{}", "true",  "-0.0"};
  switch (pick(6)) {
    case 0: {  // one byte, printable or not
      text[pick(text.size())] = static_cast<char>(pick(256));
      return text;
    }
    case 1: {  // a span cut out
      const std::size_t at = pick(text.size());
      return text.erase(at, std::min<std::size_t>(1 + pick(40), text.size() - at));
    }
    case 2: {  // a span doubled
      const std::size_t at = pick(text.size());
      return text.insert(at, text.substr(at, 1 + pick(60)));
    }
    case 3: {  // a number replaced by an extreme or a value of another type
      std::vector<std::size_t> numbers;
      for (std::size_t i = 1; i < text.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(text[i])) && text[i - 1] == ' ')
          numbers.push_back(i);
      }
      const std::size_t at = numbers[pick(numbers.size())];
      std::size_t end = at;
      while (end < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
        ++end;
      return text.replace(at, end - at, extremes[pick(extremes.size())]);
    }
    case 4: {  // a value nested deep: 100,000 levels crashed the trainer
      const std::size_t depth = pick(2) == 0 ? 100000 : 1 + pick(100);
      const std::size_t value = text.find("\"lr\": ") + 6;
      text.insert(text.find(',', value), std::string(depth, ']'));
      return text.insert(value, std::string(depth, '['));
    }
    default: {  // a key misspelt
      const std::size_t at = text.find('"', pick(text.size()));
      if (at != std::string::npos && at + 2 < text.size())
        text[at + 1] = static_cast<char>('a' + pick(26));
      return text;
    }
  }
}

TEST(Reliability, MutatedConfigurationsNeverCrashOrHangTheTrainer) {
  constexpr int kMutations = 60;
  const auto started = Clock::now();
  TempFolder dir;
  const std::string valid = core::toJsonText(tinyConfig());
  std::mt19937 random(320);
  int runs = 0, refused = 0;
  for (int i = 0; i < kMutations; ++i) {
    const std::string text = mutate(valid, random);
    const fs::path file = dir.path() / ("m" + std::to_string(i) + ".json");
    std::ofstream(file, std::ios::binary) << text;
    // Every fifth refused file goes through train too, which reads it on its own path.
    std::vector<std::string> command = {"validate-config", file.string()};
    for (bool validated = false;; validated = true) {
      TrainerProcess p(command, dir.path() / ("p" + std::to_string(runs++)));
      const auto code = p.wait(std::chrono::seconds(30));
      ASSERT_TRUE(code) << command[0] << " hung on " << file;
      ASSERT_FALSE(endedBySignal(*code)) << command[0] << " crashed on " << file << ":\n"
                                         << p.stderrText();
      EXPECT_TRUE(*code == 0 || *code == 2) << command[0] << " exited " << *code << " on " << file;
      if (*code == 2) {
        ++refused;
        EXPECT_FALSE(p.stderrText().empty())
            << command[0] << " refused " << file << " without saying why";
      }
      if (validated || *code != 2 || i % 5 != 0) break;
      // With --set, as the window launches it: adding a key copied the deep values beside it.
      command = {
          "train", "--config",         file.string(), "--run-dir", (dir.path() / "run").string(),
          "--set", "train.max_steps=1"};
    }
    std::error_code ec;
    fs::remove_all(dir.path() / "run", ec);
  }
  std::cout << "reliability: configs: " << kMutations << " mutations, " << runs << " runs, "
            << refused << " refused with a message, 0 crashes, 0 hangs, " << secondsSince(started)
            << " s" << std::endl;
}

// Structural damage to every file of a checkpoint: a resume must fail naming the file, never
// crash, never train on with part of its state reset.
TEST(Reliability, DamagedCheckpointFilesAreRefusedNamingTheFile) {
  const auto started = Clock::now();
  TempFolder dir;
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 2;
  config.train.checkpoint_every = 2;
  const fs::path run = dir.path() / "run";
  TrainerProcess first({"train", "--config", writeConfig(config, dir.path() / "c.json").string(),
                        "--run-dir", run.string()},
                       dir.path() / "first");
  ASSERT_EQ(first.wait(std::chrono::seconds(120)).value_or(-1), 0) << first.stderrText();
  const fs::path step = run / "checkpoints" / "step_2";
  const fs::path pristine = dir.path() / "pristine";
  fs::copy(step, pristine, fs::copy_options::recursive);

  using Damage = std::function<void(const fs::path&)>;
  auto bytesOf = [](const fs::path& f) { return TrainerProcess::slurp(f); };
  auto write = [](const fs::path& f, const std::string& bytes) {
    std::ofstream(f, std::ios::binary) << bytes;
  };
  auto rewrite = [](const fs::path& f, const std::function<void(weights::NamedTensors&)>& edit) {
    weights::NamedTensors tensors = weights::loadTensors(f);
    edit(tensors);
    weights::saveTensors(tensors, f);
  };
  const std::vector<std::pair<std::string, Damage>> damages = {
      {"empty file", [&](const fs::path& f) { write(f, ""); }},
      {"cut to 7 bytes", [&](const fs::path& f) { write(f, bytesOf(f).substr(0, 7)); }},
      {"cut in half",
       [&](const fs::path& f) {
         const auto b = bytesOf(f);
         write(f, b.substr(0, b.size() / 2));
       }},
      {"header length past the end",
       [&](const fs::path& f) {
         auto b = bytesOf(f);
         b.replace(0, 8, std::string(8, '\xff'));
         write(f, b);
       }},
      {"header not JSON",
       [&](const fs::path& f) {
         auto b = bytesOf(f);
         b.replace(8, 4, "{{{{");
         write(f, b);
       }},
      {"no tensors", [&](const fs::path& f) { weights::saveTensors({}, f); }},
      {"a tensor removed", [&](const fs::path& f) { rewrite(f, [](auto& t) { t.pop_back(); }); }},
      {"a tensor of another dtype",
       [&](const fs::path& f) {
         rewrite(f, [](auto& t) { t.back().second = t.back().second.to(torch::kFloat64); });
       }},
  };
  int resumes = 0;
  for (const char* file :
       {"model.safetensors", "ema.safetensors", "optimizer.safetensors", "rng.safetensors"}) {
    for (const auto& [what, damage] : damages) {
      SCOPED_TRACE(std::string(file) + ": " + what);
      damage(step / file);
      TrainerProcess resumed(
          {"train", "--run-dir", run.string(), "--resume", "--set", "train.max_steps=3"},
          dir.path() / ("resume" + std::to_string(resumes++)));
      const auto code = resumed.wait(std::chrono::seconds(60));
      fs::copy_file(pristine / file, step / file, fs::copy_options::overwrite_existing);
      ASSERT_TRUE(code) << "the resume hung";
      ASSERT_FALSE(endedBySignal(*code)) << resumed.stderrText();
      EXPECT_EQ(*code, 1) << "resumed on a damaged checkpoint:\n" << resumed.stderrText();
      const auto errors = eventsOf<core::ErrorEvent>(events(resumed.stdoutText()));
      ASSERT_EQ(errors.size(), 1u) << resumed.stdoutText();
      EXPECT_EQ(errors[0].code, "checkpoint_unreadable");
      EXPECT_NE(errors[0].message.find(file), std::string::npos) << errors[0].message;
    }
  }
  // Intact again, it resumes: what was refused was the damage.
  TrainerProcess intact(
      {"train", "--run-dir", run.string(), "--resume", "--set", "train.max_steps=3"},
      dir.path() / "intact");
  EXPECT_EQ(intact.wait(std::chrono::seconds(60)).value_or(-1), 0) << intact.stderrText();
  std::cout << "reliability: safetensors: " << resumes
            << " damaged checkpoints, every one refused naming its file, "
            << "0 crashes, " << secondsSince(started) << " s" << std::endl;
}

// Every descriptor a training process opens is close-on-exec, so no process it starts (a rank, a
// shell a user's hook runs) inherits its event stream, logs or checkpoint files. Descriptors the
// trainer inherited from this test are left out: they are this test's, not the trainer's.
TEST(Reliability, EveryDescriptorTheTrainerOpensIsCloseOnExec) {
  TempFolder dir;
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 100000;
  config.train.log_every = 1;
  const fs::path run = dir.path() / "run";
  TrainerProcess trainer({"train", "--config", writeConfig(config, dir.path() / "c.json").string(),
                          "--run-dir", run.string()},
                         dir.path() / "trainer");
  ASSERT_TRUE(waitForStart(trainer, std::chrono::seconds(120))) << trainer.stderrText();
  const auto end = Clock::now() + std::chrono::seconds(60);
  while (newestCheckpoint(run).value_or(0) < 2 && Clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GE(newestCheckpoint(run).value_or(0), 2) << trainer.stderrText();

  // The flags line of /proc/PID/fdinfo/FD, octal; O_CLOEXEC is 02000000.
  const auto flags = [](const fs::path& fdinfo) -> std::optional<long> {
    std::ifstream in(fdinfo);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("flags:", 0) == 0) return std::stol(line.substr(6), nullptr, 8);
    }
    return std::nullopt;
  };
  const auto target = [](const fs::path& link) {
    std::error_code ec;
    return fs::read_symlink(link, ec).string();
  };
  const fs::path proc = "/proc/" + std::to_string(trainer.pid());
  int checked = 0;
  std::vector<std::string> leaks;
  for (const auto& entry : fs::directory_iterator(proc / "fd")) {
    const std::string fd = entry.path().filename().string();
    if (std::stoi(fd) <= 2) continue;  // stdin, stdout, stderr: inherited on purpose
    const auto theirs = flags(proc / "fdinfo" / fd);
    if (!theirs) continue;  // closed since the listing
    const fs::path ours = fs::path("/proc/self/fd") / fd;
    const auto mine = flags(fs::path("/proc/self/fdinfo") / fd);
    if (mine && !(*mine & 02000000) && target(ours) == target(entry.path())) continue;  // inherited
    ++checked;
    if (!(*theirs & 02000000)) leaks.push_back(fd + " -> " + target(entry.path()));
  }
  ::kill(trainer.pid(), SIGKILL);
  EXPECT_GE(checked, 3) << "events.jsonl, metrics.jsonl and the log should be open";
  EXPECT_TRUE(leaks.empty()) << "descriptors without close-on-exec: "
                             << ::testing::PrintToString(leaks);
  std::cout << "reliability: descriptors: " << checked << " opened by the trainer, " << leaks.size()
            << " without close-on-exec" << std::endl;
}

}  // namespace
}  // namespace tb::trainer
