#pragma once
// The YAML that Python projects write their model configurations in (taming-transformers'
// configs/*.yaml, latent-diffusion's), read into JSON without a YAML library.
//
// Understood: block mappings and sequences (any consistent indentation, "- key: value" items),
// flow sequences and mappings on one line ("[1, 1, 2]", "{a: 1}"), plain, single- and
// double-quoted scalars, comments, a leading "---". Scalars resolve as PyYAML's safe_load
// resolves them (YAML 1.1): true/false/yes/no/on/off in any of its spellings, null and ~,
// integers, numbers with a dot or an exponent, everything else a string. Refused with the line:
// anchors, aliases, tags, block scalars (| and >), multi-line flow collections, several
// documents, tabs in indentation, a key given twice.

#include <nlohmann/json.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tb::core {

/// A text this reader cannot take. The message is "SOURCE:LINE: what".
class YamlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// `text` as JSON; `source` names it in errors. An empty document is null.
nlohmann::json parseYamlSubset(std::string_view text, const std::string& source);

/// The file at `path` as JSON. Throws YamlError naming the file (also when it cannot be read).
nlohmann::json readYamlSubsetFile(const std::filesystem::path& path);

}  // namespace tb::core
