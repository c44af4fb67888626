#pragma once

#include "app/control/page_id.h"
#include "core/trainer_command.h"

#include <optional>
#include <string>
#include <vector>

namespace tb::app {

/// What the user asked `tokenbench` for. Paths are kept as typed; nothing is checked on disk.
struct CommandLineOptions {
  bool help = false;           ///< --help: print usage and exit 0.
  bool version = false;        ///< --version: print the version (and trainer path) and exit 0.
  bool noGui = false;          ///< --no-gui: run headless; only a QCoreApplication is created.
  bool resume = false;         ///< --resume: continue the run in runDir from its last checkpoint.
  std::string configPath;      ///< --config FILE: run configuration (JSON); empty if not given.
  std::string runDir;          ///< --run-dir DIR: run directory; empty if not given.
  std::optional<PageId> page;  ///< --page NAME: page shown first.
  std::string screenshotPath;  ///< --screenshot FILE.png: render the window there and exit.
  std::string trainerPath;     ///< --trainer PATH: tokenbench-trainer to use; empty if not given.
  std::string timeBudget;      ///< --time-budget T: stop the run cleanly after T (20m, 90s, 1h).

  /// --compare (with --no-gui): run `tokenbench-trainer compare` as `compareCommand` says.
  bool compare = false;
  /// --checkpoint NAME=PATH (repeatable, in order), --out, --data, --data-type, --clips and
  /// --lpips-*: the trainer's `compare` options, their defaults core's.
  core::CompareCommand compareCommand;
};

/// Parses `tokenbench`'s command line. Pure: no Qt application object, no file access, no
/// output, so the caller can decide between window and `--no-gui` before any exists.
class CommandLine {
 public:
  /// Outcome of parse(): the options, or a one-line message that names the offending option.
  struct Result {
    CommandLineOptions options;
    std::string error;  ///< Empty on success.
    bool ok() const { return error.empty(); }
  };

  /// Parses the arguments after the program name.
  static Result parse(const std::vector<std::string>& arguments);
  /// Parses `main`'s argc/argv (argv[0] is the program name and is skipped).
  static Result parse(int argc, const char* const* argv);

  /// The usage text that --help prints: every option with a one-line description.
  static std::string usage();
};

}  // namespace tb::app
