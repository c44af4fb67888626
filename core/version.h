#pragma once
#include <string>

namespace tb::core {

/// Tokenbench's version ("0.1.0"), the same for the front end and the trainer.
std::string versionString();

/// Version of the NDJSON event protocol spoken between the front end and the trainer.
inline constexpr int kProtocolVersion = 1;

/// Version of the run configuration schema (`version` at the top of config.json).
inline constexpr int kConfigSchemaVersion = 1;

}  // namespace tb::core
