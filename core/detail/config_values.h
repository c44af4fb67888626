#pragma once
// Internal to core/: conversion of configuration values to and from JSON, shared by the
// schema, the reader, the writer and validation.

#include "core/config_schema.h"
#include "core/run_config.h"

#include <nlohmann/json.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace tb::core::detail {

using Json = nlohmann::ordered_json;

inline FieldType typeOf(const bool&) { return FieldType::Bool; }
inline FieldType typeOf(const int&) { return FieldType::Int; }
inline FieldType typeOf(const double&) { return FieldType::Number; }
inline FieldType typeOf(const std::string&) { return FieldType::String; }
inline FieldType typeOf(const std::vector<int>&) { return FieldType::IntList; }
inline FieldType typeOf(const std::vector<double>&) { return FieldType::NumberList; }
inline FieldType typeOf(const std::vector<std::string>&) { return FieldType::StringList; }
inline FieldType typeOf(const std::vector<LayerSpec>&) { return FieldType::LayerList; }
/// Choice keys are strings in documents and forms.
template <class E, std::enable_if_t<IsChoice<E>::value, int> = 0>
FieldType typeOf(const E&) {
  return FieldType::String;
}

Json layerToJson(const LayerSpec& layer);

template <class T>
Json valueToJson(const T& value) {
  if constexpr (IsChoice<T>::value) {
    return Json(choiceName(value));
  } else {
    return Json(value);
  }
}
template <>
inline Json valueToJson(const std::vector<LayerSpec>& layers) {
  Json out = Json::array();
  for (const auto& l : layers) out.push_back(layerToJson(l));
  return out;
}

/// Describes a JSON value for messages: `string "abc"`, `number 1.5`, `an object`.
std::string describeJson(const Json& value);

/// Convert `value` into `out`. On a type mismatch, append the message for `path` to `errors`
/// (element errors get `path[i]`) and leave `out` unchanged.
struct ValueError {
  std::string path;
  std::string message;
};
void readValue(const Json& value, const std::string& path, bool& out,
               std::vector<ValueError>& errors);
void readValue(const Json& value, const std::string& path, int& out,
               std::vector<ValueError>& errors);
void readValue(const Json& value, const std::string& path, double& out,
               std::vector<ValueError>& errors);
void readValue(const Json& value, const std::string& path, std::string& out,
               std::vector<ValueError>& errors);
void readValue(const Json& value, const std::string& path, std::vector<int>& out,
               std::vector<ValueError>& errors);
void readValue(const Json& value, const std::string& path, std::vector<double>& out,
               std::vector<ValueError>& errors);
void readValue(const Json& value, const std::string& path, std::vector<std::string>& out,
               std::vector<ValueError>& errors);
void readValue(const Json& value, const std::string& path, std::vector<LayerSpec>& out,
               std::vector<ValueError>& errors);

/// A choice key: a string naming one of the enum's values; an unknown name is reported with
/// the names allowed and leaves `out` unchanged.
template <class E, std::enable_if_t<IsChoice<E>::value, int> = 0>
void readValue(const Json& value, const std::string& path, E& out,
               std::vector<ValueError>& errors) {
  std::string name;
  const std::size_t before = errors.size();
  readValue(value, path, name, errors);
  if (errors.size() != before) return;
  if (auto parsed = parseChoice<E>(name)) {
    out = *parsed;
  } else {
    errors.push_back({path, notOneOfMessage(choiceNames<E>(), name)});
  }
}

/// The spec of a key as the schema lists it: a choice key's names come from its table.
template <class T>
FieldSpec specOf(const T&, const FieldSpec& spec) {
  if constexpr (IsChoice<T>::value) {
    return FieldSpec(spec).choices(choiceNames<T>());
  } else {
    return spec;
  }
}

inline std::string joinPath(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

}  // namespace tb::core::detail
