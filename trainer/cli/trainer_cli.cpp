#include "trainer/cli/trainer_cli.h"

#include "core/config_io.h"
#include "core/version.h"
#include "trainer/cli/config_commands.h"
#include "trainer/runtime_info.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

namespace tb::trainer {
namespace {

std::string versionText() {
  const RuntimeInfo rt = queryRuntime();
  std::ostringstream s;
  s << "tokenbench-trainer " << core::versionString() << "\n"
    << "protocol " << core::kProtocolVersion << ", config schema " << core::kConfigSchemaVersion << "\n"
    << "LibTorch " << rt.torch_version << ", BLAS " << rt.blas << ", " << rt.threads << " threads\n"
    << "CUDA " << (TB_WITH_CUDA ? "yes" : "no") << ", FFmpeg " << (TB_WITH_FFMPEG ? "yes" : "no")
    << ", OpenCV " << (TB_WITH_OPENCV ? "yes" : "no");
  return s.str();
}

}  // namespace

int runTrainerCli(int argc, char** argv) {
  CLI::App app{"tokenbench-trainer: the Tokenbench training backend (LibTorch)", "tokenbench-trainer"};
  app.require_subcommand(1);
  app.fallthrough(false);
  bool show_version = false;
  app.add_flag("--version", show_version, "Print versions and build options, then exit");

  auto* presets = app.add_subcommand("presets", "List the named presets, one per line (name first)");

  std::string preset;
  auto* print = app.add_subcommand("print-config", "Print a complete configuration, every default spelled out");
  print->add_option("--preset", preset, "Start from this preset instead of the defaults");

  std::string source;
  auto* validate = app.add_subcommand("validate-config",
                                      "Check a configuration; every error on stderr, one per line, "
                                      "starting with its JSON path (exit 2)");
  validate->add_option("file", source, "Configuration file, or - for standard input")->required();

  // --version alone needs no subcommand.
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::cout << versionText() << "\n";
    return 0;
  }
  // CLI11 reports an unknown word as "A subcommand is required"; name it instead.
  if (argc >= 2 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::cerr << "tokenbench-trainer: unknown subcommand \"" << argv[1] << "\"";
      if (auto guess = core::closestMatch(argv[1], names)) std::cerr << " (did you mean \"" << *guess << "\"?)";
      std::cerr << "\n\n" << app.help();
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "tokenbench-trainer: " << e.what() << "\n\n" << app.help();
    return 2;
  }
  if (show_version) {
    std::cout << versionText() << "\n";
    return 0;
  }
  if (*presets) return cli::listPresets();
  if (*print) return cli::printConfig(preset);
  if (*validate) return cli::validateConfig(source);
  std::cerr << app.help();
  return 2;
}

}  // namespace tb::trainer
