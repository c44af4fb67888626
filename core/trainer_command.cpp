#include "core/trainer_command.h"

namespace tb::core {

std::vector<std::string> trainArguments(const TrainCommand& command) {
  std::vector<std::string> args{"train"};
  if (!command.config_file.empty()) args.insert(args.end(), {"--config", command.config_file});
  args.insert(args.end(), {"--run-dir", command.run_dir});
  if (command.resume) args.emplace_back("--resume");
  if (!command.time_budget.empty()) args.insert(args.end(), {"--time-budget", command.time_budget});
  if (command.control_stdin) args.emplace_back("--control-stdin");
  return args;
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
  return args;
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
