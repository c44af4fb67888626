#pragma once
// Reading, writing and validating run configurations.

#include "core/run_config.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tb::core {

/// One problem in a configuration, located by its JSON path ("train.batch_size",
/// "model.layers[3]"; empty for the document itself).
struct ConfigError {
  std::string path;
  std::string message;

  /// "train.batch_size: must be >= 1, got 0"
  std::string toString() const;
  bool operator==(const ConfigError& o) const { return path == o.path && message == o.message; }
};

/// A configuration and every error found while reading and validating it. Keys missing from
/// the document keep their defaults, so partial documents (presets, hand-written files) work.
struct ConfigLoad {
  RunConfig config;
  std::vector<ConfigError> errors;

  bool ok() const { return errors.empty(); }
  /// The document was read and is a JSON object, so `config` holds what it says (defaults where
  /// it says nothing) even when some values were refused; false when the file could not be read
  /// or is not JSON (such an error is the only one, with an empty path).
  bool documentRead() const { return errors.empty() || !errors.front().path.empty(); }
};

/// Deepest nesting of arrays and objects a configuration may have. The deepest value a valid
/// configuration holds (a layer entry such as ["consecutive_residual", 2]) is 4 levels down.
/// Copying a JSON value recurses once per level (and `--set` copies: adding a key to an object
/// copies its other values), so hostile nesting is refused before parsing: 100,000 levels
/// overflowed the stack.
inline constexpr int kMaxConfigNestingDepth = 64;

/// JSON text -> document. Returns the error instead ("invalid JSON: ...", "JSON nested deeper
/// than 64 levels"), with an empty path. Never throws.
std::optional<ConfigError> readConfigDocument(std::string_view json_text,
                                              nlohmann::ordered_json& doc);

/// Parse and validate JSON text: syntax, types, unknown keys (with a "did you mean" for near
/// misses), ranges and the rules between keys. Never throws.
ConfigLoad parseRunConfig(std::string_view json_text);
/// Same, from a parsed document (partial or complete).
ConfigLoad parseRunConfig(const nlohmann::ordered_json& doc);
/// Same, from a file; an unreadable file is one error naming it.
ConfigLoad loadRunConfig(const std::filesystem::path& file);

/// The complete document, every default spelled out, keys in schema order.
nlohmann::ordered_json toJson(const RunConfig& config);
/// toJson as text, indented by two spaces, with a final newline.
std::string toJsonText(const RunConfig& config);

/// Range checks of every key plus the rules between keys (a layer list the image size cannot
/// take, a frame count the time compression cannot take, a missing data path, ...).
std::vector<ConfigError> validate(const RunConfig& config);

/// What `path` is when it exists but is not a regular file ("a directory", "a character
/// device", ...; symbolic links followed), for errors about files that are read whole: /dev/zero
/// would be read without end. Empty for a regular file and for nothing at all.
std::string irregularFileKind(const std::filesystem::path& path);

/// Apply `key.path=value` to a document: value is read as JSON, or taken as a string when it
/// is not JSON (`--set data.path=/clips`). Returns an error for a malformed assignment or a
/// path that crosses a non-object; key names themselves are checked when the result is parsed.
std::optional<ConfigError> applyOverride(nlohmann::ordered_json& doc, std::string_view assignment);

/// Keys whose change between a run's config.json and a resumed run's is allowed.
const std::vector<std::string>& resumeSafeKeys();
/// Paths of leaf keys whose values differ between a and b, in schema order.
std::vector<std::string> changedKeys(const RunConfig& a, const RunConfig& b);

/// Edit distance (insertions, deletions, substitutions, adjacent transpositions), for "did you
/// mean" suggestions.
std::size_t editDistance(std::string_view a, std::string_view b);
/// The candidate closest to `word` if it is close enough to be a likely typo.
std::optional<std::string> closestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace tb::core
