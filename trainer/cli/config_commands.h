#pragma once
// Subcommands that read and write configurations: presets, print-config, validate-config.

#include <string>

namespace tb::trainer::cli {

int listPresets();
int printConfig(const std::string& preset);
/// `source` is a file path or "-" for standard input.
int validateConfig(const std::string& source);
/// Prints docs/configuration.md: every key's type, default, range, unit and description.
int printConfigReference();

}  // namespace tb::trainer::cli
