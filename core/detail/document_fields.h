#pragma once
// Internal to core/: reading the fields of the JSON documents the trainer prints for the window
// (model-info, data-info). Each accessor throws std::runtime_error naming the field.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tb::core::detail {

using Json = nlohmann::ordered_json;

inline const Json& documentField(const Json& object, const char* key, bool (Json::*isType)() const,
                                 const char* what) {
  const auto it = object.find(key);
  if (it == object.end()) throw std::runtime_error(std::string("missing \"") + key + "\"");
  if (!((*it).*isType)()) throw std::runtime_error(std::string("\"") + key + "\" is not " + what);
  return *it;
}

inline std::int64_t documentInteger(const Json& object, const char* key) {
  return documentField(object, key, &Json::is_number_integer, "an integer").get<std::int64_t>();
}

inline double documentNumber(const Json& object, const char* key) {
  return documentField(object, key, &Json::is_number, "a number").get<double>();
}

inline std::string documentString(const Json& object, const char* key) {
  return documentField(object, key, &Json::is_string, "a string").get<std::string>();
}

inline std::vector<std::int64_t> documentIntegers(const Json& object, const char* key) {
  std::vector<std::int64_t> values;
  for (const Json& v : documentField(object, key, &Json::is_array, "an array")) {
    if (!v.is_number_integer()) {
      throw std::runtime_error(std::string("\"") + key + "\" holds a non-integer");
    }
    values.push_back(v.get<std::int64_t>());
  }
  return values;
}

/// Parses `text` as a JSON object (nesting capped as configuration files are) whose "version",
/// when present, is `version`; throws std::runtime_error otherwise.
Json readDocumentObject(std::string_view text, int version);

}  // namespace tb::core::detail
