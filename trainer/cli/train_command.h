#pragma once
// `tokenbench-trainer train`: one training run, events on stdout, human log on stderr.

#include "core/trainer_command.h"

#include <optional>
#include <string>
#include <vector>

namespace tb::trainer::cli {

/// `train`: the run `command` describes (config_file "-" reads standard input). Exit 0 when it
/// completed or stopped, 1 when it failed, 2 for bad arguments or configuration.
int train(const core::TrainCommand& command);

/// `summary --run-dir DIR`: one JSON object with the run's step, first and last training
/// reconstruction loss, latest validation metrics and complete checkpoints.
int summarizeRun(const std::string& run_dir);

/// "20m" -> 1200, "90s" -> 90, "1.5h" -> 5400, "300" -> 300; nullopt when malformed or < 0.
std::optional<double> parseDuration(const std::string& text);

}  // namespace tb::trainer::cli
