#pragma once
// The configuration reference (docs/configuration.md), generated from the schema so that the
// document cannot drift from the code: `tokenbench-trainer config-reference` prints it and a
// core test compares the checked-in file with it.

#include "core/config_schema.h"

#include <string>

namespace tb::core {

/// The allowed values of a key in words: "1 to 4096", ">= 0", "> 0, <= 1", "`l1`, `mse`",
/// prefixed "each " for lists and followed by "length 3" when a list has a fixed length; empty
/// when the key takes any value of its type.
std::string describeRange(const FieldInfo& field);

/// A default value as written in the reference: compact JSON with ", " between list elements
/// (`[7, 7, 7]`, `"synthetic"`, `0.0001`, `true`).
std::string describeDefault(const FieldInfo& field);

/// The whole reference as Markdown: an introduction, then one table per section of
/// configSections() (key, type, default, range, unit, description), then the presets.
/// Deterministic: the same schema always gives the same bytes.
std::string configReferenceMarkdown();

}  // namespace tb::core
