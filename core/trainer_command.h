#pragma once
// The trainer's command lines as the front end starts them: one function per subcommand, so the
// window's launcher, the Setup page's "command line" box, `tokenbench --no-gui` and the tests
// all pass the trainer the same words. Option names are the trainer's usage (trainer_cli.cpp).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tb::core {

/// One `tokenbench-trainer train` invocation.
struct TrainCommand {
  std::string config_file;    ///< run configuration (JSON file); empty when resuming
  std::string run_dir;        ///< run directory the trainer writes
  bool resume = false;        ///< continue the run in run_dir from its last checkpoint
  bool control_stdin = true;  ///< read control lines (core/control_message.h) on stdin
  std::string time_budget;    ///< e.g. "20m"; empty for none
};

/// `train` and its options (program not included), in the order the trainer's usage lists them:
/// train [--config F] --run-dir D [--resume] [--time-budget T] [--control-stdin].
std::vector<std::string> trainArguments(const TrainCommand& command);

/// One `tokenbench-trainer compare` invocation.
struct CompareCommand {
  /// NAME=PATH pairs: a tokenizer name and its checkpoint folder or run directory; at least one.
  std::vector<std::pair<std::string, std::string>> entries;
  std::string out_dir;               ///< where metrics.json, GIFs, strips and grid.png go
  std::string data_dir;              ///< videos or images; empty: procedural clips
  std::string data_type = "videos";  ///< "videos" or "images" (with data_dir)
  int clips = 4;                     ///< clips to compare (>= 1)
  std::string lpips_net = "alex";    ///< "alex" or "vgg" (with both weight files)
  std::string lpips_backbone;        ///< LPIPS backbone weights; empty: no LPIPS
  std::string lpips_lin;             ///< LPIPS linear-layer weights; empty: no LPIPS
};

/// `compare` and its options (program not included). LPIPS options are passed only when both
/// weight files are given.
std::vector<std::string> compareArguments(const CompareCommand& command);

/// `word` as one word for a POSIX shell: unchanged when it is made of ASCII letters, digits and
/// `-_./=:,+@%` only, else in single quotes (a `'` inside becomes `'\''`). "" becomes `''`.
std::string shellQuote(std::string_view word);

/// Program and arguments, each shellQuote()d, joined by spaces: a line a user can paste.
std::string shellCommandLine(std::string_view program, const std::vector<std::string>& arguments);

}  // namespace tb::core
