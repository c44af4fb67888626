#pragma once
// Named presets: JSON documents in resources/presets, compiled in, applied over the defaults.

#include "core/config_io.h"

#include <string>
#include <string_view>
#include <vector>

namespace tb::core {

struct PresetInfo {
  std::string name;
  std::string description;
};

/// Every preset, in a fixed order ("demo" first).
std::vector<PresetInfo> presets();
/// The defaults with a preset applied and validated. An unknown name is one error at path
/// "preset" (with a "did you mean").
ConfigLoad loadPreset(std::string_view name);
/// The preset's own overrides (the "config" object of its file); null for an unknown name.
nlohmann::ordered_json presetOverrides(std::string_view name);

namespace detail {
struct PresetText {
  const char* name;
  const char* json;
};
const std::vector<PresetText>& presetTexts();
}  // namespace detail

}  // namespace tb::core
