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
  std::string config_file;        ///< run configuration (JSON file, "-" for stdin); may be empty
  std::string preset;             ///< a preset instead of config_file; usually empty
  std::string run_dir;            ///< run directory the trainer writes
  bool resume = false;            ///< continue the run in run_dir from its last checkpoint
  std::vector<std::string> sets;  ///< key.path=value overrides, in order
  bool control_stdin = false;     ///< read control lines (core/control_message.h) on stdin; the
                                  ///< window and `tokenbench --no-gui` always do
  std::string time_budget;        ///< e.g. "20m", "90s", "1h" or seconds; empty for none
};

/// `train` and its options (program not included), in the order the trainer's usage lists them:
/// train [--config F] [--preset P] --run-dir D [--resume] [--set K=V ...] [--time-budget T]
/// [--control-stdin].
std::vector<std::string> trainArguments(const TrainCommand& command);

/// One `tokenbench-trainer compare` invocation.
struct CompareCommand {
  /// NAME=PATH pairs: a tokenizer name and its checkpoint folder or run directory; at least one.
  std::vector<std::pair<std::string, std::string>> entries;
  std::string out_dir;               ///< where metrics.json, GIFs, strips and grid.png go
  std::string data_dir;              ///< videos or images; empty: procedural clips
  std::string data_type = "videos";  ///< one of compareDataTypes() (with data_dir)
  int clips = 4;                     ///< clips to compare (>= 1)
  std::string lpips_net = "alex";    ///< a LpipsNet name (with both weight files)
  std::string lpips_backbone;        ///< LPIPS backbone weights; empty: no LPIPS
  std::string lpips_lin;             ///< LPIPS linear-layer weights; empty: no LPIPS
  std::string fid_weights;           ///< pytorch-fid's InceptionV3 weights; empty: no rFID
  std::string fvd_weights;           ///< the I3D-400 weights; empty: no rFVD
  std::string device = "auto";       ///< where the tokenizers and LPIPS run: auto, cpu, cuda[:N]
  bool raw_weights = false;          ///< model.safetensors even where EMA weights exist
  /// Videos whole (the longest prefix every tokenizer codes) instead of the first clip of each.
  bool whole_videos = false;
  int max_frames = 0;  ///< with whole_videos: at most this many frames of each (0: all)
};

/// The data.type names compare reads a folder as: "videos", "images" (in that order; the first is
/// CompareCommand's default).
std::vector<std::string> compareDataTypes();

/// `compare` and its options (program not included). LPIPS options are passed only when both
/// weight files are given; --device only when it is not "auto".
std::vector<std::string> compareArguments(const CompareCommand& command);

/// Why `name` cannot name a tokenizer in a comparison (it becomes a file name and a column):
/// empty when it is letters, digits, '-', '_' and '.', does not start with '.' and is not
/// "original".
std::string compareEntryNameProblem(std::string_view name);

/// One --checkpoint word, NAME=PATH, as an entry. Throws std::invalid_argument naming the word
/// when it is not NAME=PATH or NAME is not a valid name.
std::pair<std::string, std::string> parseCompareEntry(std::string_view word);

/// `word` as one word for a POSIX shell: unchanged when it is made of ASCII letters, digits and
/// `-_./=:,+@%` only, else in single quotes (a `'` inside becomes `'\''`). "" becomes `''`.
std::string shellQuote(std::string_view word);

/// Program and arguments, each shellQuote()d, joined by spaces: a line a user can paste.
std::string shellCommandLine(std::string_view program, const std::vector<std::string>& arguments);

}  // namespace tb::core
