#include "app/control/command_line.h"

#include "core/config_choices.h"
#include "core/trainer_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <stdexcept>

namespace tb::app {
namespace {

constexpr const char* kProgramName = "tokenbench";

// The values CLI11 fills in. --page arrives as text and is checked after parsing, so that the
// message can list the page names in words.
struct RawOptions {
  CommandLineOptions options;
  std::string pageName;
  std::vector<std::string> checkpoints;  // --checkpoint words, parsed into compareCommand.entries
};

// The options that only --compare takes.
constexpr const char* kCompareOptions[] = {"--checkpoint",     "--out",          "--data",
                                           "--data-type",      "--clips",        "--lpips-net",
                                           "--lpips-backbone", "--lpips-lin",    "--fid-weights",
                                           "--fvd-weights",    "--whole-videos", "--max-frames"};

void describe(CLI::App& app, RawOptions& raw) {
  CommandLineOptions& o = raw.options;
  core::CompareCommand& c = o.compareCommand;
  app.set_help_flag();  // --help is an ordinary flag here: main decides what happens
  app.add_flag("-h,--help", o.help, "Print this help and exit");
  app.add_flag("--version", o.version, "Print the version and the trainer in use, and exit");
  app.add_flag("--no-gui", o.noGui, "Run without a window (headless, e.g. on cluster nodes)");
  app.add_option("--config", o.configPath, "Run configuration to load (JSON)")->type_name("FILE");
  app.add_option("--run-dir", o.runDir,
                 "Run directory to open; with --config, where a new run is written (it need "
                 "not exist yet)")
      ->type_name("DIR");
  app.add_flag("--resume", o.resume, "Continue the run in --run-dir from its last checkpoint");
  app.add_option("--page", raw.pageName, "Page to show first: " + pageNameList())
      ->type_name("NAME");
  app.add_option("--screenshot", o.screenshotPath,
                 "Render the window to a PNG file and exit (no interaction)")
      ->type_name("FILE.png");
  app.add_option("--trainer", o.trainerPath,
                 "tokenbench-trainer executable to use (overrides TOKENBENCH_TRAINER)")
      ->type_name("PATH");
  app.add_option("--time-budget", o.timeBudget,
                 "With --no-gui: stop the run cleanly after this long (20m, 90s, 1h)")
      ->type_name("T");
  app.add_flag("--compare", o.compare,
               "With --no-gui: run tokenbench-trainer compare with the options below");
  app.add_option("--checkpoint", raw.checkpoints,
                 "With --compare: a tokenizer, NAME=PATH to a checkpoint or run directory "
                 "(repeat)")
      ->type_name("NAME=PATH")
      ->allow_extra_args(false);
  app.add_option("--out", c.out_dir, "With --compare: folder for the review (created)")
      ->type_name("DIR");
  app.add_option("--data", c.data_dir,
                 "With --compare: folder of videos or images (default: procedural clips)")
      ->type_name("DIR");
  app.add_option("--data-type", c.data_type, "With --compare: videos (default) or images")
      ->type_name("TYPE")
      ->check(CLI::IsMember(core::compareDataTypes()));
  app.add_option("--clips", c.clips, "With --compare: number of clips (default 4)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--whole-videos", c.whole_videos,
               "With --compare: score each video whole instead of its first clip");
  app.add_option("--max-frames", c.max_frames,
                 "With --compare --whole-videos: at most this many frames of each video")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--lpips-net", c.lpips_net, "With --compare: LPIPS backbone, alex or vgg")
      ->type_name("NET")
      ->check(CLI::IsMember(core::choiceNames<core::LpipsNet>()));
  app.add_option("--fid-weights", c.fid_weights,
                 "With --compare: pytorch-fid's InceptionV3 weights, adds rFID")
      ->type_name("FILE");
  app.add_option("--fvd-weights", c.fvd_weights, "With --compare: the I3D-400 weights, adds rFVD")
      ->type_name("FILE");
  app.add_option("--lpips-backbone", c.lpips_backbone,
                 "With --compare: LPIPS backbone weights (torch.save dict)")
      ->type_name("FILE");
  app.add_option("--lpips-lin", c.lpips_lin,
                 "With --compare: LPIPS linear-layer weights (torch.save dict)")
      ->type_name("FILE");
  app.footer(
      "Environment:\n"
      "  TOKENBENCH_TRAINER          tokenbench-trainer executable to use when --trainer is "
      "not given\n"
      "\n"
      "Exit status: 0 success, 1 the work failed, 2 bad usage or nothing could be done.\n"
      "With --no-gui it is the trainer's: 0 completed or stopped (SIGINT/SIGTERM stop the run\n"
      "cleanly), 1 failed, crashed or killed, 2 usage or configuration error.");
}

bool endsWithPng(const std::string& path) {
  if (path.size() < 4) {
    return false;
  }
  std::string suffix = path.substr(path.size() - 4);
  std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return suffix == ".png";
}

// Checks that only make sense once every option is known. Returns the error, or "".
std::string checkCombination(const CLI::App& app, RawOptions& raw) {
  CommandLineOptions& o = raw.options;
  core::CompareCommand& c = o.compareCommand;
  const auto given = [&](const char* option) { return app.get_option(option)->count() > 0; };
  if (!o.screenshotPath.empty() && !endsWithPng(o.screenshotPath)) {
    return "--screenshot: '" + o.screenshotPath + "' must end in .png";
  }
  if (o.noGui && !o.screenshotPath.empty()) {
    return "--screenshot: needs the window and cannot be combined with --no-gui";
  }
  if (o.noGui && o.page) {
    return "--page: needs the window and cannot be combined with --no-gui";
  }
  if (o.resume && o.runDir.empty()) {
    return "--resume: needs --run-dir DIR (the run to continue)";
  }
  const bool compareOptions =
      std::any_of(std::begin(kCompareOptions), std::end(kCompareOptions), given);
  if (compareOptions && !o.compare) {
    return "--checkpoint, --out, --data, --clips and --lpips-*: only with --compare";
  }
  if (!o.compare) {
    return {};
  }
  if (!o.noGui) {
    return "--compare: runs without a window; add --no-gui (the window has a Compare page)";
  }
  if (!o.configPath.empty() || !o.runDir.empty() || o.resume || !o.timeBudget.empty()) {
    return "--compare: cannot be combined with --config, --run-dir, --resume or --time-budget";
  }
  if (raw.checkpoints.empty()) {
    return "--compare: needs at least one --checkpoint NAME=PATH";
  }
  for (const std::string& word : raw.checkpoints) {
    try {
      c.entries.push_back(core::parseCompareEntry(word));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  }
  if (c.out_dir.empty()) {
    return "--compare: needs --out DIR (where the review is written)";
  }
  if (given("--data-type") && c.data_dir.empty()) {
    return "--data-type: needs --data DIR";
  }
  if (c.lpips_backbone.empty() != c.lpips_lin.empty()) {
    return "--lpips-backbone and --lpips-lin: give both weight files, or neither";
  }
  return {};
}

}  // namespace

CommandLine::Result CommandLine::parse(const std::vector<std::string>& arguments) {
  RawOptions raw;
  CLI::App app{"Workbench for training and inspecting visual tokenizers", kProgramName};
  describe(app, raw);

  Result result;
  // CLI11 would read `--no-gui=no` as "off"; a switch that takes a value is a typo here.
  for (const std::string& argument : arguments) {
    for (const char* flag : {"-h", "--help", "--version", "--no-gui", "--resume", "--compare"}) {
      if (argument.rfind(std::string(flag) + "=", 0) == 0) {
        result.error = std::string(flag) + ": takes no value (got '" + argument + "')";
        return result;
      }
    }
  }
  try {
    std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());
    app.parse(reversed);  // CLI11 takes the arguments last-first
  } catch (const CLI::ParseError& error) {
    result.error = error.what();
    return result;
  }
  // `--config ""` would otherwise look like "not given" to everything downstream.
  for (const char* option :
       {"--config", "--run-dir", "--screenshot", "--trainer", "--time-budget", "--out", "--data",
        "--lpips-backbone", "--lpips-lin", "--fid-weights", "--fvd-weights"}) {
    if (app.get_option(option)->count() > 0 && app.get_option(option)->as<std::string>().empty()) {
      result.error = std::string(option) + ": the path is empty";
      return result;
    }
  }
  if (app.get_option("--page")->count() > 0) {
    raw.options.page = pageFromName(raw.pageName);
    if (!raw.options.page) {
      result.error =
          "--page: unknown page '" + raw.pageName + "' (expected " + pageNameList() + ")";
      return result;
    }
  }
  result.error = checkCombination(app, raw);
  result.options = raw.options;
  return result;
}

CommandLine::Result CommandLine::parse(int argc, const char* const* argv) {
  std::vector<std::string> arguments;
  for (int i = 1; i < argc; ++i) {
    arguments.emplace_back(argv[i]);
  }
  return parse(arguments);
}

std::string CommandLine::usage() {
  RawOptions raw;
  CLI::App app{"Workbench for training and inspecting visual tokenizers", kProgramName};
  describe(app, raw);
  return app.help();
}

}  // namespace tb::app
