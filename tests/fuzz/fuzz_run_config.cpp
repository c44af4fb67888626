// libFuzzer target: the configuration parser must never crash, and whatever it accepts must
// write back to a document that parses to the same configuration.
#include "core/config_io.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tb::core::ConfigLoad load = tb::core::parseRunConfig(text);
  for (const auto& e : load.errors) {
    if (e.message.empty()) std::abort();
  }
  if (load.ok()) {
    const std::string written = tb::core::toJsonText(load.config);
    tb::core::ConfigLoad again = tb::core::parseRunConfig(std::string_view(written));
    if (!again.ok() || tb::core::toJsonText(again.config) != written) std::abort();
  }
  // Overrides take arbitrary text too.
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  (void)tb::core::applyOverride(doc, text);
  return 0;
}
