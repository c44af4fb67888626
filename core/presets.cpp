#include "core/presets.h"

#include "core/detail/config_values.h"

namespace tb::core {
namespace {

using detail::Json;

// A preset file is {"description": "...", "config": {...overrides of the defaults...}}.
Json presetDocument(std::string_view name) {
  for (const auto& p : detail::presetTexts()) {
    if (name == p.name) return Json::parse(p.json);
  }
  return nullptr;
}

}  // namespace

std::vector<PresetInfo> presets() {
  std::vector<PresetInfo> out;
  for (const auto& p : detail::presetTexts()) {
    const Json doc = Json::parse(p.json);
    out.push_back({p.name, doc.value("description", std::string())});
  }
  return out;
}

Json presetOverrides(std::string_view name) {
  const Json doc = presetDocument(name);
  if (doc.is_null()) return nullptr;
  return doc.value("config", Json::object());
}

ConfigLoad loadPreset(std::string_view name) {
  const Json overrides = presetOverrides(name);
  if (overrides.is_null()) {
    ConfigLoad result;
    std::vector<std::string> names;
    for (const auto& p : detail::presetTexts()) names.emplace_back(p.name);
    std::string message = "unknown preset \"" + std::string(name) + "\"";
    if (auto guess = closestMatch(name, names)) message += " (did you mean \"" + *guess + "\"?)";
    result.errors.push_back({"preset", message});
    return result;
  }
  return parseRunConfig(overrides);
}

}  // namespace tb::core
