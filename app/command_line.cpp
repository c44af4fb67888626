#include "app/command_line.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>

namespace tb::app {
namespace {

constexpr const char* kProgramName = "tokenbench";

// The values CLI11 fills in. --page arrives as text and is checked after parsing, so that the
// message can list the page names in words.
struct RawOptions {
  CommandLineOptions options;
  std::string pageName;
};

void describe(CLI::App& app, RawOptions& raw) {
  CommandLineOptions& o = raw.options;
  app.set_help_flag();  // --help is an ordinary flag here: main decides what happens
  app.add_flag("-h,--help", o.help, "Print this help and exit");
  app.add_flag("--version", o.version, "Print the version and the trainer in use, and exit");
  app.add_flag("--no-gui", o.noGui, "Run without a window (headless, e.g. on cluster nodes)");
  app.add_option("--config", o.configPath, "Run configuration to load (JSON)")->type_name("FILE");
  app.add_option("--run-dir", o.runDir, "Run directory to open, or to write a new run into")
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
  app.footer(
      "Environment:\n"
      "  TOKENBENCH_TRAINER          tokenbench-trainer executable to use when --trainer is "
      "not given\n"
      "\n"
      "Exit status: 0 success, 1 the work failed, 2 bad usage or nothing could be done.");
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
std::string checkCombination(const CommandLineOptions& o) {
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
    for (const char* flag : {"-h", "--help", "--version", "--no-gui", "--resume"}) {
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
  for (const char* option : {"--config", "--run-dir", "--screenshot", "--trainer"}) {
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
  result.error = checkCombination(raw.options);
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
