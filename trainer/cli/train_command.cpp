#include "trainer/cli/train_command.h"

#include "core/metric_names.h"
#include "trainer/cli/control_channel.h"

#include "core/atomic_file.h"
#include "core/config_io.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "core/presets.h"
#include "core/run_directory.h"
#include "trainer/distributed/launch_environment.h"
#include "trainer/distributed/local_launcher.h"
#include "trainer/event_sink.h"
#include "trainer/training/training_run.h"
#include "trainer/user_error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace tb::trainer::cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

int usageError(const std::string& message) {
  std::cerr << "tokenbench-trainer train: " << message << "\n";
  return 2;
}

bool readDocument(const std::string& source, Json& doc, std::string& error) {
  std::string text;
  if (source == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(source, std::ios::binary);
    if (!in) {
      error = "cannot read " + source;
      return false;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (const auto problem = core::readConfigDocument(text, doc)) {
    error = source + ": " + problem->message;
    return false;
  }
  return true;
}

}  // namespace

std::optional<double> parseDuration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double scale = 1;
  std::string number = text;
  switch (text.back()) {
    case 's':
      number.pop_back();
      break;
    case 'm':
      scale = 60;
      number.pop_back();
      break;
    case 'h':
      scale = 3600;
      number.pop_back();
      break;
    default:
      break;
  }
  try {
    std::size_t used = 0;
    const double v = std::stod(number, &used);
    if (used != number.size() || !(v >= 0)) return std::nullopt;
    return v * scale;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

int train(const core::TrainCommand& args) {
  if (args.run_dir.empty()) return usageError("--run-dir is required");
  if (!args.config_file.empty() && !args.preset.empty())
    return usageError("give --config or --preset, not both");
  if (args.config_file == "-" && args.control_stdin) {
    // Both read stdin: the configuration to its end, which the control reader takes for the
    // front end going away (the run stopped at once).
    return usageError(
        "--config - and --control-stdin both read stdin; give the configuration as a file");
  }
  const core::RunDirectory run(args.run_dir);
  const bool has_run = fs::exists(run.configFile());

  TrainOptions options;
  options.resume = args.resume;
  if (!args.time_budget.empty()) {
    const auto budget = parseDuration(args.time_budget);
    if (!budget)
      return usageError("--time-budget: expected a duration such as 20m, 90s or 1h, got \"" +
                        args.time_budget + "\"");
    options.time_budget_s = *budget;
  }

  // The document to train: the given file or preset, else (when resuming) the run's own.
  Json doc;
  std::string error;
  if (!args.config_file.empty()) {
    if (!readDocument(args.config_file, doc, error)) return usageError(error);
  } else if (!args.preset.empty()) {
    doc = core::presetOverrides(args.preset);
    if (doc.is_null()) return usageError(core::loadPreset(args.preset).errors.front().toString());
  } else if (args.resume && has_run) {
    if (!readDocument(run.configFile().string(), doc, error)) return usageError(error);
  } else {
    return usageError(args.resume ? "nothing to resume in " + args.run_dir +
                                        " (no config.json); give --config"
                                  : "--config FILE (or --preset NAME) is required");
  }
  for (const auto& assignment : args.sets) {
    if (auto e = core::applyOverride(doc, assignment)) return usageError("--set " + e->toString());
  }
  core::ConfigLoad load = core::parseRunConfig(doc);
  if (!load.ok()) {
    for (const auto& e : load.errors) std::cerr << e.toString() << "\n";
    return 2;
  }

  distributed::LaunchInfo launch;
  try {
    launch = distributed::detectLaunch(load.config.distributed, distributed::processEnvironment());
  } catch (const UserError& e) {
    return usageError(e.what());
  }
  // The run directory's state is checked once: by the process the user started (a launcher's
  // ranks may find config.json already written by rank 0).
  const bool checks_run_dir = launch.launcher != "local" && launch.rank == 0;
  if (checks_run_dir && has_run && !args.resume) {
    return usageError(args.run_dir +
                      " already holds a run (config.json); pass --resume to continue it, "
                      "or choose another --run-dir");
  }
  if (checks_run_dir && args.resume && has_run) {
    const core::ConfigLoad stored = core::loadRunConfig(run.configFile());
    if (!stored.ok()) {
      for (const auto& e : stored.errors)
        std::cerr << run.configFile().string() << ": " << e.toString() << "\n";
      return 2;
    }
    std::vector<std::string> refused;
    const auto& safe = core::resumeSafeKeys();
    for (const auto& key : core::changedKeys(stored.config, load.config)) {
      if (std::find(safe.begin(), safe.end(), key) == safe.end()) refused.push_back(key);
    }
    if (!refused.empty()) {
      std::string list;
      for (const auto& k : refused) list += (list.empty() ? "" : ", ") + k;
      return usageError(
          "cannot resume with a changed configuration: " + list +
          " differ from the run's config.json (only train.max_steps, intervals, limits, threads, "
          "the distributed settings, loss.discr_start_step and the perceptual loss may change)");
    }
  }

  const auto& d = load.config.distributed;
  if (!launch.distributed() && d.nproc_per_node * d.nnodes > 1) {
    // The ranks read the configuration as resolved here (file or preset, then --set), from a file.
    distributed::LocalLaunch local;
    if (const std::string problem = run.writeProblem(); !problem.empty())
      return usageError("--run-dir: " + problem);
    const fs::path resolved = run.logsDir() / "launch_config.json";
    try {
      fs::create_directories(resolved.parent_path());
      core::writeFileAtomically(resolved, core::toJsonText(load.config));
    } catch (const std::exception& e) {
      return usageError(std::string("cannot write the ranks' configuration: ") + e.what());
    }
    local.arguments = {"train", "--config", resolved.string(), "--run-dir", args.run_dir};
    if (args.resume) local.arguments.push_back("--resume");
    if (!args.time_budget.empty())
      local.arguments.insert(local.arguments.end(), {"--time-budget", args.time_budget});
    if (args.control_stdin) local.arguments.push_back("--control-stdin");
    local.config = load.config;
    local.run = run;
    local.control_stdin = args.control_stdin;
    return distributed::runLocalLaunch(local);
  }

  // Events own the real stdout from here; anything else printed there goes to stderr.
  EventSink events = EventSink::claimStdout(launch.rank == 0);
  RunControl control;
  const ControlChannel channel(control, args.control_stdin);
  options.launch = launch;
  return runTraining(load.config, run, options, events, control);
}

int summarizeRun(const std::string& run_dir) {
  const core::RunDirectory run(run_dir);
  if (!fs::exists(run.metricsFile())) {
    std::cerr << "tokenbench-trainer summary: no metrics.jsonl in " << run_dir << "\n";
    return 2;
  }
  core::MetricsFollower follower(run.metricsFile());
  Json out = Json::object();
  Json valid = Json::object();
  std::optional<double> first_loss, last_loss;
  std::int64_t last_step = 0;
  for (const auto& row : follower.poll()) {
    last_step = std::max(last_step, row.step);
    for (const auto& [name, value] : row.values) {
      if (name == core::metric::kTrainReconLoss) {
        if (!first_loss) first_loss = value;
        last_loss = value;
      } else if (name.rfind(core::metric::kValidGroup, 0) == 0) {
        valid[name] = value;
      }
    }
  }
  out["run_dir"] = run_dir;
  out["step"] = last_step;
  out["first_recon_loss"] = first_loss ? Json(*first_loss) : Json();
  out["last_recon_loss"] = last_loss ? Json(*last_loss) : Json();
  out["valid"] = valid;
  out["checkpoints"] = run.listCheckpointSteps();
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace tb::trainer::cli
