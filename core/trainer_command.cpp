#include "core/trainer_command.h"

#include "core/config_choices.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace tb::core {

std::vector<std::string> trainArguments(const TrainCommand& command) {
  std::vector<std::string> args{"train"};
  if (!command.config_file.empty()) args.insert(args.end(), {"--config", command.config_file});
  if (!command.preset.empty()) args.insert(args.end(), {"--preset", command.preset});
  args.insert(args.end(), {"--run-dir", command.run_dir});
  if (command.resume) args.emplace_back("--resume");
  for (const std::string& set : command.sets) args.insert(args.end(), {"--set", set});
  if (!command.time_budget.empty()) args.insert(args.end(), {"--time-budget", command.time_budget});
  if (command.control_stdin) args.emplace_back("--control-stdin");
  return args;
}

std::vector<std::string> compareDataTypes() {
  return {choiceName(DataType::Videos), choiceName(DataType::Images)};
}

std::vector<std::string> compareArguments(const CompareCommand& command) {
  std::vector<std::string> args{"compare"};
  for (const auto& [name, path] : command.entries) {
    args.insert(args.end(), {"--checkpoint", name + "=" + path});
  }
  args.insert(args.end(), {"--out", command.out_dir});
  if (!command.data_dir.empty()) {
    args.insert(args.end(), {"--data", command.data_dir, "--data-type", command.data_type});
  }
  args.insert(args.end(), {"--clips", std::to_string(command.clips)});
  if (!command.lpips_backbone.empty() && !command.lpips_lin.empty()) {
    args.insert(args.end(), {"--lpips-net", command.lpips_net, "--lpips-backbone",
                             command.lpips_backbone, "--lpips-lin", command.lpips_lin});
  }
  if (!command.fid_weights.empty()) args.insert(args.end(), {"--fid-weights", command.fid_weights});
  if (!command.fvd_weights.empty()) args.insert(args.end(), {"--fvd-weights", command.fvd_weights});
  if (command.raw_weights) args.emplace_back("--raw-weights");
  if (command.whole_videos) args.emplace_back("--whole-videos");
  if (command.max_frames > 0)
    args.insert(args.end(), {"--max-frames", std::to_string(command.max_frames)});
  if (!command.device.empty() && command.device != "auto")
    args.insert(args.end(), {"--device", command.device});
  return args;
}

std::string compareEntryNameProblem(std::string_view name) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!plain || name == "original" || name.front() == '.')
    return "NAME must be letters, digits, '-', '_' or '.' (and not \"original\")";
  return {};
}

std::pair<std::string, std::string> parseCompareEntry(std::string_view word) {
  const auto eq = word.find('=');
  const std::string quoted = "--checkpoint \"" + std::string(word) + "\"";
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == word.size())
    throw std::invalid_argument(quoted + ": expected NAME=PATH");
  const std::string name(word.substr(0, eq));
  if (const std::string problem = compareEntryNameProblem(name); !problem.empty())
    throw std::invalid_argument(quoted + ": " + problem);
  return {name, std::string(word.substr(eq + 1))};
}

std::string shellQuote(std::string_view word) {
  constexpr std::string_view kSafe = "-_./=:,+@%";
  bool safe = !word.empty();
  for (const char c : word) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && kSafe.find(c) == std::string_view::npos) safe = false;
  }
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string shellCommandLine(std::string_view program, const std::vector<std::string>& arguments) {
  std::string line = shellQuote(program);
  for (const std::string& word : arguments) line += " " + shellQuote(word);
  return line;
}

}  // namespace tb::core
