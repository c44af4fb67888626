#pragma once
// `tokenbench-trainer train`: one training run, events on stdout, human log on stderr.

#include <optional>
#include <string>
#include <vector>

namespace tb::trainer::cli {

struct TrainArgs {
  std::string config;  ///< config file, "-" for stdin, or empty
  std::string preset;  ///< preset name instead of a file, or empty
  std::string run_dir;
  bool resume = false;
  std::vector<std::string> sets;  ///< key.path=value overrides
  bool control_stdin = false;
  std::string time_budget;  ///< "20m", "90s", "1h" or seconds
};

int train(const TrainArgs& args);

/// `summary --run-dir DIR`: one JSON object with the run's step, first and last training
/// reconstruction loss, latest validation metrics and complete checkpoints.
int summarizeRun(const std::string& run_dir);

/// "20m" -> 1200, "90s" -> 90, "1.5h" -> 5400, "300" -> 300; nullopt when malformed or < 0.
std::optional<double> parseDuration(const std::string& text);

}  // namespace tb::trainer::cli
