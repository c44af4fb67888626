// A stand-in for tokenbench-trainer, for testing how the front end handles every way a trainer
// can behave: well, badly, or not at all. No torch; real protocol lines from core::encodeEvent.
//
//   fake_trainer train --config F --run-dir D [--resume] [--control-stdin] ...
//   fake_trainer compare ARGS...        prints its arguments on stderr, exits $TB_FAKE_EXIT (0)
//   fake_trainer data-info ...          prints what the real one prints for the demo preset's
//                                       procedural clips (the Setup page asks it)
//   fake_trainer model-info|summary ... prints {}
//   fake_trainer init ... --out DIR     a checkpoint folder: DIR/config.json, model.safetensors
// (the last three are what scripts/quickstart.sh runs besides train and compare)
//
// Behaviour (environment):
//   TB_FAKE_MODE     normal | ignore-stop | hang | crash | fail | exit3 | usage | nodone | flood |
//                    garbage | escape | silent | chatty | metric-events (default normal)
//   TB_FAKE_STEPS    steps of a normal run (default 20)
//   TB_FAKE_STEP_MS  milliseconds per step (default 10)
//   TB_FAKE_LOG_EVERY  normal: a metrics row and progress event every N steps only (default 1),
//                    and a checkpoint at the last step when N > 1: a run that ended between two
//                    rows (a time budget), as a real one with train.log_every N
//   TB_FAKE_CONTROL_LOG  file that every control line read on stdin is appended to
//   TB_FAKE_FLOOD    progress lines of the flood (default 100000)
//   TB_FAKE_SILENT_MS  silence of "silent" (default 1500)
//   TB_FAKE_PHASES   before the first step, the phases of a real run: "data" (not counted), then
//                    "reference" counted 0..N in N + 1 events TB_FAKE_STEP_MS apart (default 0:
//                    none)
//   TB_FAKE_WARN_AT  step of a normal run after which it prints a warning event (a rollback,
//                    with a long message), as a trainer does when a step went non-finite
//
// Like the real trainer, every mode that trains holds an flock on <run dir>/.lock while it runs,
// appends each event it prints to <run dir>/events.jsonl and writes its metric rows to
// metrics.jsonl only (never as events; the row before the step's progress event), so a window
// following the run directory sees what it would see of a real run.
//
// normal:      hello, per step a metrics row and a progress event, a sample and a checkpoint half
//              way (files really written in the run dir), done "completed", exit 0. A stop line
//              or the end of stdin (with --control-stdin) ends it with done "stopped"; a
//              checkpoint line writes a checkpoint. SIGTERM kills it (default action).
// ignore-stop: like normal but endless, and deaf to control lines and the end of stdin.
// hang:        hello, then nothing; ignores control lines, SIGTERM and SIGINT (needs SIGKILL).
// crash:       three steps, a line on stderr, abort().
// fail:        two steps, an error event, done "failed", exit 1.
// exit3:       two steps, two lines on stderr, exit 3.
// usage:       a usage message on stderr, no events, exit 2.
// nodone:      three steps, exit 0 without done.
// flood:       TB_FAKE_FLOOD progress events as fast as it can write, then done "completed".
// garbage:     binary bytes, invalid JSON, a wrong version, an unknown type, an oversized line,
//              a valid event split across two writes, then done "completed"; 5 bad lines.
// escape:      sample and checkpoint paths outside the run dir (3) and one inside, done.
// silent:      hello, TB_FAKE_SILENT_MS of silence, one progress, done "completed".
// chatty:      200 lines on stderr, hello, done "completed".
// metric-events: an older trainer that also sent every metrics row as a `metric` event: hello,
//              per step (every 100 ms) a row and its metric event, TB_FAKE_STEPS (20) of them,
//              then one progress event and done "completed". Only the metric events speak
//              between hello and the end.
#include "core/control_message.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "core/version.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace tb::core;

std::string envOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

long envInt(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::strtol(value, nullptr, 10) : fallback;
}

void writeRaw(const std::string& bytes) {
  std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  std::fflush(stdout);
}

// The run directory's events.jsonl and metrics.jsonl, once train() opened them.
std::ofstream g_events;
std::ofstream g_metrics;

void emit(const Event& event, bool flush = true) {
  const std::string line = encodeEvent(event) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  if (flush) std::fflush(stdout);
  if (g_events.is_open()) {
    g_events << line;
    if (flush) g_events.flush();
  }
}

// One row of metrics.jsonl, flushed: a reader woken by the progress event that follows finds it.
void writeMetrics(std::int64_t step, std::vector<std::pair<std::string, double>> values) {
  if (!g_metrics.is_open()) return;
  MetricsRow row;
  row.step = step;
  row.wall_time = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count()) /
                  1000.0;
  row.values = std::move(values);
  g_metrics << formatMetricsLine(row) << '\n' << std::flush;
}

void sleepMs(long ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

HelloEvent hello(const std::string& runDir) {
  HelloEvent h;
  h.trainer_version = "0.0.0-fake";
  h.torch_version = "none";
  h.protocol = kProtocolVersion;
  h.launcher = "single";
  h.device = "cpu";
  h.precision = "bf16 (auto: fake)";
  h.blas = "none";
  h.threads = 1;
  h.interop_threads = 1;
  h.run_dir = runDir;
  return h;
}

std::vector<std::pair<std::string, double>> lossValues(double loss) {
  return {{"train/loss", loss}, {"train/recon_loss", loss * 0.9}};
}

void step(std::int64_t s, std::int64_t total, double loss) {
  writeMetrics(s, lossValues(loss));
  emit(ProgressEvent{s, total, 100.0, static_cast<double>(total - s) / 100.0});
}

// Control lines from stdin, read without blocking between steps.
class Control {
 public:
  explicit Control(bool enabled) : m_enabled(enabled) {}

  // Waits up to `ms` for input; returns "stop", "checkpoint", "eof" or "".
  std::string poll(long ms) {
    if (!m_enabled || m_eof) {
      sleepMs(ms);
      return {};
    }
    pollfd fd{STDIN_FILENO, POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(ms)) <= 0) return {};
    char buffer[4096];
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n <= 0) {
      m_eof = true;
      return "eof";
    }
    m_pending.append(buffer, static_cast<std::size_t>(n));
    std::string result;
    for (std::size_t nl; (nl = m_pending.find('\n')) != std::string::npos;) {
      const std::string line = m_pending.substr(0, nl);
      m_pending.erase(0, nl + 1);
      // Every line received, byte for byte, for the test that holds it against the golden file.
      if (const char* log = std::getenv("TB_FAKE_CONTROL_LOG")) {
        std::ofstream(log, std::ios::app | std::ios::binary) << line << '\n';
      }
      const auto message = tb::core::decodeControlLine(line);
      if (message == tb::core::ControlMessage::Stop) result = "stop";
      if (message == tb::core::ControlMessage::Checkpoint && result.empty()) result = "checkpoint";
    }
    return result;
  }

 private:
  bool m_enabled;
  bool m_eof = false;
  std::string m_pending;
};

void writeCheckpoint(const fs::path& runDir, std::int64_t s) {
  const fs::path dir = runDir / "checkpoints" / ("step_" + std::to_string(s));
  fs::create_directories(dir);
  std::ofstream(dir / "COMPLETE") << "ok\n";
  emit(CheckpointEvent{s, "checkpoints/step_" + std::to_string(s)});
}

int normalRun(const fs::path& runDir, bool controlStdin, bool deaf) {
  const long steps = deaf ? 1000000 : envInt("TB_FAKE_STEPS", 20);
  const long stepMs = envInt("TB_FAKE_STEP_MS", 10);
  const long logEvery = std::max(1L, envInt("TB_FAKE_LOG_EVERY", 1));
  Control control(controlStdin);
  emit(hello(runDir.string()));
  if (const long parts = envInt("TB_FAKE_PHASES", 0); parts > 0) {
    emit(PhaseEvent{"data", "indexing the data folder", 0, 0});
    for (long k = 0; k <= parts; ++k) {
      emit(PhaseEvent{"reference", "fitting the classic VQ reference: drawing blocks", k, parts});
      const std::string command = control.poll(stepMs);
      if (!deaf && (command == "stop" || command == "eof")) {
        emit(DoneEvent{"stopped", 0});
        return 0;
      }
    }
  }
  const long warnAt = envInt("TB_FAKE_WARN_AT", 0);
  for (long s = 1; s <= steps; ++s) {
    if (s % logEvery == 0) step(s, steps, 1.0 / static_cast<double>(s));
    if (s == warnAt) {
      emit(WarningEvent{"rollback",
                        "the loss went non-finite at step " + std::to_string(s) +
                            "; rolled back to the last good state and halved the learning rate "
                            "(train.nan_policy = rollback), the next steps retry the same data",
                        s});
    }
    if (s == steps / 2) {
      fs::create_directories(runDir / "samples");
      const std::string name = "samples/step_" + std::to_string(s) + ".gif";
      std::ofstream(runDir / name) << "GIF89a";
      emit(SampleEvent{s, "reconstruction", name});
      writeCheckpoint(runDir, s);
    }
    const std::string command = control.poll(stepMs);
    if (deaf) continue;
    if (command == "checkpoint") {
      writeCheckpoint(runDir, s);
    } else if (command == "stop" || command == "eof") {
      emit(LogEvent{"info", command == "stop" ? "stop line received" : "stdin closed"});
      std::cerr << "fake: stopping at step " << s << " (" << command << ")\n";
      emit(DoneEvent{"stopped", s});
      return 0;
    }
  }
  if (logEvery > 1) writeCheckpoint(runDir, steps);
  std::cerr << "fake: done\n";
  emit(DoneEvent{"completed", steps});
  return 0;
}

int flood(const fs::path& runDir) {
  const long count = envInt("TB_FAKE_FLOOD", 100000);
  static char buffer[1 << 16];
  std::setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
  emit(hello(runDir.string()));
  for (long s = 1; s <= count; ++s) {
    emit(ProgressEvent{s, count, 1e5, static_cast<double>(count - s) / 1e5}, false);
  }
  emit(DoneEvent{"completed", count});
  return 0;
}

// An older trainer: its metric events are the only sign of life between hello and the end.
int metricEvents(const fs::path& runDir) {
  const long steps = envInt("TB_FAKE_STEPS", 20);
  emit(hello(runDir.string()));
  for (long s = 1; s <= steps; ++s) {
    const double loss = 1.0 / static_cast<double>(s);
    writeMetrics(s, lossValues(loss));
    emit(MetricEvent{s, lossValues(loss)});
    sleepMs(100);
  }
  emit(ProgressEvent{steps, steps, 10.0, 0.0});
  emit(DoneEvent{"completed", steps});
  return 0;
}

int garbage(const fs::path& runDir) {
  emit(hello(runDir.string()));
  static const char kBinary[] =
      "\x00\xff\xfe\x01"
      "binary"
      "\x80\n";
  writeRaw(std::string(kBinary, sizeof kBinary - 1));  // 1: not UTF-8 / JSON
  writeRaw("{\"v\":1,\"type\":\"progress\",\"st");     // half a line...
  sleepMs(50);
  writeRaw("ep\":1,\"total\":\n");                               // 2: ...completed badly
  writeRaw("{\"v\":99,\"type\":\"progress\"}\n");                // 3: wrong version
  writeRaw("{\"v\":1,\"type\":\"gossip\"}\n");                   // 4: unknown type
  writeRaw(std::string(kMaxEventLineBytes + 4096, 'x') + "\n");  // 5: oversized
  writeRaw("\n");                                                // blank: ignored
  const std::string good = encodeEvent(ProgressEvent{3, 4, 1.5, 2.0}) + "\n";
  writeRaw(good.substr(0, 10));  // a valid event in two writes
  sleepMs(50);
  writeRaw(good.substr(10));
  emit(DoneEvent{"completed", 3});
  return 0;
}

int escape(const fs::path& runDir) {
  emit(hello(runDir.string()));
  emit(SampleEvent{1, "reconstruction", "../../etc/passwd"});
  emit(SampleEvent{1, "reconstruction", "/etc/passwd"});
  emit(CheckpointEvent{1, "checkpoints/../../outside"});
  fs::create_directories(runDir / "samples");
  std::ofstream(runDir / "samples" / "ok.gif") << "GIF89a";
  emit(SampleEvent{1, "reconstruction", "samples/ok.gif"});
  emit(DoneEvent{"completed", 1});
  return 0;
}

int train(const std::vector<std::string>& args) {
  fs::path runDir;
  std::string config;
  bool controlStdin = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--run-dir" && i + 1 < args.size())
      runDir = args[++i];
    else if (args[i] == "--config" && i + 1 < args.size())
      config = args[++i];
    else if (args[i] == "--control-stdin")
      controlStdin = true;
  }
  if (runDir.empty()) {
    std::cerr << "fake_trainer train: --run-dir is required\n";
    return 2;
  }
  const std::string mode = envOr("TB_FAKE_MODE", "normal");
  std::cerr << "fake: mode " << mode << ", run dir " << runDir.string() << "\n";
  if (mode == "usage") {
    std::cerr << "tokenbench-trainer train: " << runDir.string()
              << " already holds a run (config.json); pass --resume to continue it\n";
    return 2;
  }
  fs::create_directories(runDir);
  if (!config.empty() && fs::exists(config)) {
    fs::copy_file(config, runDir / "config.json", fs::copy_options::overwrite_existing);
  } else if (!fs::exists(runDir / "config.json")) {
    std::ofstream(runDir / "config.json") << "{}\n";  // --preset: the run has its config too
  }
  // Held (and the files open) until the process ends, however it ends.
  const int lock = ::open((runDir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    std::cerr << "fake_trainer: " << runDir.string() << " is locked by another trainer\n";
    return 2;
  }
  g_events.open(runDir / "events.jsonl", std::ios::app);
  g_metrics.open(runDir / "metrics.jsonl", std::ios::app);
  if (mode == "normal") return normalRun(runDir, controlStdin, false);
  if (mode == "ignore-stop") return normalRun(runDir, controlStdin, true);
  if (mode == "flood") return flood(runDir);
  if (mode == "metric-events") return metricEvents(runDir);
  if (mode == "garbage") return garbage(runDir);
  if (mode == "escape") return escape(runDir);
  if (mode == "hang") {
    std::signal(SIGTERM, SIG_IGN);
    std::signal(SIGINT, SIG_IGN);
    emit(hello(runDir.string()));
    for (;;) sleepMs(1000);
  }
  if (mode == "chatty") {
    for (int i = 0; i < 200; ++i) std::cerr << "line " << i << "\n";
    std::cerr << std::flush;
    emit(hello(runDir.string()));
    emit(DoneEvent{"completed", 0});
    return 0;
  }
  if (mode == "silent") {
    emit(hello(runDir.string()));
    sleepMs(envInt("TB_FAKE_SILENT_MS", 1500));
    emit(ProgressEvent{1, 1, 1.0, 0.0});
    emit(DoneEvent{"completed", 1});
    return 0;
  }
  emit(hello(runDir.string()));
  if (mode == "crash") {
    for (int s = 1; s <= 3; ++s) step(s, 10, 0.5);
    std::cerr << "fake: about to abort" << std::endl;
    std::abort();
  }
  if (mode == "fail") {
    for (int s = 1; s <= 2; ++s) step(s, 10, 0.5);
    std::cerr << "tokenbench-trainer: error: data.path \"/nowhere\" is not a folder" << std::endl;
    emit(ErrorEvent{"data_path_missing", "data.path \"/nowhere\" is not a folder",
                    "point data.path at a folder of videos"});
    emit(DoneEvent{"failed", std::nullopt});
    return 1;
  }
  if (mode == "exit3") {
    for (int s = 1; s <= 2; ++s) step(s, 10, 0.5);
    std::cerr << "fake: something went wrong\nfake: giving up with status 3" << std::endl;
    return 3;
  }
  if (mode == "nodone") {
    for (int s = 1; s <= 3; ++s) step(s, 10, 0.5);
    return 0;
  }
  std::cerr << "fake_trainer: unknown TB_FAKE_MODE " << mode << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << "usage: fake_trainer train|compare ...\n";
    return 2;
  }
  if (args[0] == "compare") {
    std::cerr << "fake compare:";
    for (std::size_t i = 1; i < args.size(); ++i) std::cerr << ' ' << args[i];
    std::cerr << "\nfake compare: wrote metrics.json" << std::endl;
    return static_cast<int>(envInt("TB_FAKE_EXIT", 0));
  }
  if (args[0] == "train") return train({args.begin() + 1, args.end()});
  if (args[0] == "model-info" || args[0] == "summary") {
    std::cout << "{}" << std::endl;
    return 0;
  }
  if (args[0] == "init") {
    for (std::size_t i = 1; i + 1 < args.size(); ++i) {
      if (args[i] != "--out") continue;
      fs::create_directories(args[i + 1]);
      std::ofstream(fs::path(args[i + 1]) / "config.json") << "{}\n";
      std::ofstream(fs::path(args[i + 1]) / "model.safetensors") << "fake";
      return 0;
    }
    std::cerr << "fake_trainer init: --out is required\n";
    return 2;
  }
  if (args[0] == "data-info") {
    std::cout << R"({"type":"synthetic","path":"","files":512,"train_files":461,)"
              << R"("valid_files":51,"train_clips":461,"valid_clips":51,)"
              << R"("frames":{"min":5,"max":5,"total":2560},)"
              << R"("resolutions":[{"width":32,"height":32,"files":512}],"skipped":[],)"
              << R"("preview":[]})" << std::endl;
    return 0;
  }
  std::cerr << "fake_trainer: unknown subcommand " << args[0] << "\n";
  return 2;
}
