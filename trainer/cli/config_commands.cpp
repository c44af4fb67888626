#include "trainer/cli/config_commands.h"

#include "core/config_io.h"
#include "core/config_reference.h"
#include "core/presets.h"

#include <iostream>
#include <iterator>
#include <sstream>

namespace tb::trainer::cli {

int listPresets() {
  for (const auto& p : core::presets()) std::cout << p.name << "\t" << p.description << "\n";
  return 0;
}

int printConfig(const std::string& preset) {
  core::ConfigLoad load = preset.empty() ? core::ConfigLoad{} : core::loadPreset(preset);
  if (!load.ok()) {
    for (const auto& e : load.errors) std::cerr << e.toString() << "\n";
    return 2;
  }
  std::cout << core::toJsonText(load.config);
  return 0;
}

int validateConfig(const std::string& source) {
  core::ConfigLoad load;
  std::string name = source;
  if (source == "-") {
    name = "<stdin>";
    const std::string text((std::istreambuf_iterator<char>(std::cin)),
                           std::istreambuf_iterator<char>());
    load = core::parseRunConfig(std::string_view(text));
  } else {
    load = core::loadRunConfig(source);
  }
  if (!load.ok()) {
    // One error per line, each starting with its JSON path; document-level errors with the source.
    for (const auto& e : load.errors)
      std::cerr << (e.path.empty() ? name : e.path) << ": " << e.message << "\n";
    std::cerr << name << ": " << load.errors.size()
              << (load.errors.size() == 1 ? " error" : " errors") << "\n";
    return 2;
  }
  std::cout << name << ": valid\n";
  return 0;
}

int printConfigReference() {
  std::cout << core::configReferenceMarkdown();
  return 0;
}

}  // namespace tb::trainer::cli
