#pragma once
// Internal to core/: JSON for every document that describes its fields with
// `template <class V> void describe(V& v)` (see core/document_field.h). DocumentWriter fills an
// object in the order of the description; DocumentReader fills a struct from an object and
// throws FieldError, a structured refusal that each document turns into its own words
// (documentErrorText() for the files, the event protocol its ProtocolError).
//
// Member types: bool, int, std::int64_t, std::uint64_t, double, std::string,
// std::vector<std::int64_t>, std::vector<double>, std::array<std::int64_t, N>,
// std::vector<std::pair<std::string, double>> (an object of named numbers), a described struct,
// a list of them, and std::optional of any of these (absent when empty). Readers ignore keys
// they do not know.

#include "core/document_field.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tb::core::detail {

using Json = nlohmann::ordered_json;

/// What a value should have been, for refusals.
enum class JsonExpect {
  Bool,
  Integer,
  NonNegativeInteger,
  Number,
  NullableNumber,  ///< a number, or null for NaN (DocField::nanAsNull)
  String,
  Array,
  FixedArray,  ///< an array of FieldError::size elements
  Object,
};

/// Why DocumentReader refused a document: the first problem met, in description order.
class FieldError : public std::exception {
 public:
  enum class Problem {
    Missing,     ///< a required field is absent
    WrongType,   ///< `field` is not `expected` (it is a `got`)
    OutOfRange,  ///< an integer `field` does not fit its member; `value` is its text
    NotAllowed,  ///< string `field` is `value`, which is not among `allowed`
    BadElement,  ///< an element of list `field` is not `expected`; `noun` names it if set
    BadEntry,    ///< entry `key` of object `field` is not `expected` (it is a `got`)
    MissingKey,  ///< object `field` has no entry for the `noun` `key`
    Invalid,     ///< a rule of the document (DocumentReader::require) failed: `value`
  };

  Problem problem = Problem::Invalid;
  std::string field;
  JsonExpect expected = JsonExpect::Object;
  std::string got;  ///< jsonTypeName of the value found
  std::string value;
  std::string allowed;
  std::string key;
  std::string noun;
  std::size_t size = 0;

  const char* what() const noexcept override { return "document field refused"; }
};

/// Type of a JSON value for messages: "float" and "integer" for numbers, else nlohmann's name
/// ("string", "null", "object", ...).
const char* jsonTypeName(const Json& value);

/// The refusal as the document files (data-info, model-info, compare report, reference.json)
/// word it, naming the field: `missing "frames"`, `"files" is not an integer`,
/// `"skipped" holds a non-object`, `"metrics" has nothing for tokenizer "x"`.
std::string documentErrorText(const FieldError& error);

/// Parses `text` as a JSON object (nesting capped as configuration files are) whose "version",
/// when present, is `version`; throws std::runtime_error otherwise.
Json readDocumentObject(std::string_view text, int version);

namespace traits {
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsInt64Array : std::false_type {};
template <std::size_t N>
struct IsInt64Array<std::array<std::int64_t, N>> : std::true_type {};
}  // namespace traits

// describe() is not const, because readers fill the members through it; a writer only reads
// them, so it walks a const document through this cast rather than through a copy.
template <class T>
T& describable(const T& value) {
  return const_cast<T&>(value);
}

/// Writes a described struct into a JSON object, keys in the order of its describe().
class DocumentWriter {
 public:
  /// Fields are added to `object` (made an object if it is not), after the keys it has.
  explicit DocumentWriter(Json& object) : m_object(object) {
    if (!m_object.is_object()) m_object = Json::object();
  }

  template <class T>
  void field(const char* key, const T& value, const DocField& spec = DocField()) {
    if constexpr (traits::IsOptional<T>::value) {
      if (value) m_object[key] = toJson(*value, spec);
    } else {
      if (spec.presence() == DocField::Presence::OmitUnset && !isSet(value)) return;
      m_object[key] = toJson(value, spec);
    }
  }

  /// A list of structs described by `describeElement(visitor, element, position)`.
  template <class T, class DescribeElement>
  void field(const char* key, const std::vector<T>& values, const DocField& spec,
             DescribeElement describeElement) {
    if (spec.presence() == DocField::Presence::OmitUnset && values.empty()) return;
    Json list = Json::array();
    for (std::size_t i = 0; i < values.size(); ++i) {
      Json element = Json::object();
      DocumentWriter writer(element);
      describeElement(writer, describable(values[i]), i);
      list.push_back(std::move(element));
    }
    m_object[key] = std::move(list);
  }

  template <class T>
  void fieldOr(const char* key, const T& value, const T& /*fallback*/) {
    field(key, value);
  }

  template <class DescribeMembers>
  void object(const char* key, DescribeMembers describeMembers) {
    Json child = Json::object();
    DocumentWriter writer(child);
    describeMembers(writer);
    m_object[key] = std::move(child);
  }

  /// `values[k]` under `keys[k]`, for the k that both lists have.
  template <class T>
  void keyed(const char* key, const std::vector<T>& values, const std::vector<std::string>& keys,
             const char* /*keyNoun*/, const DocField& spec = DocField()) {
    if (spec.presence() == DocField::Presence::OmitUnset && values.empty()) return;
    Json byKey = Json::object();
    for (std::size_t k = 0; k < values.size() && k < keys.size(); ++k) {
      byKey[keys[k]] = toJson(values[k], spec);
    }
    m_object[key] = std::move(byKey);
  }

  void require(bool /*condition*/, std::string_view /*message*/) {}

 private:
  template <class T>
  static bool isSet(const T& value) {
    if constexpr (std::is_arithmetic_v<T>) {
      return value > 0;
    } else {
      return !value.empty();
    }
  }

  static Json number(double value, const DocField& spec) {
    return spec.isNanAsNull() && !std::isfinite(value) ? Json(nullptr) : Json(value);
  }

  template <class T>
  static Json toJson(const T& value, const DocField& spec) {
    if constexpr (std::is_same_v<T, double>) {
      return number(value, spec);
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      Json list = Json::array();
      for (double v : value) list.push_back(number(v, spec));
      return list;
    } else if constexpr (std::is_same_v<T, std::vector<std::pair<std::string, double>>>) {
      // operator[]: a repeated name is written once, with its last value, at its first place.
      Json named = Json::object();
      for (const auto& [name, v] : value) named[name] = number(v, spec);
      return named;
    } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string> ||
                         std::is_same_v<T, std::vector<std::int64_t>> ||
                         traits::IsInt64Array<T>::value) {
      return Json(value);
    } else if constexpr (traits::IsVector<T>::value) {
      Json list = Json::array();
      for (const auto& element : value) list.push_back(toJson(element, DocField()));
      return list;
    } else {
      Json object = Json::object();
      DocumentWriter writer(object);
      describable(value).describe(writer);
      return object;
    }
  }

  Json& m_object;
};

/// Reads a described struct from a JSON object; throws FieldError at the first problem.
class DocumentReader {
 public:
  explicit DocumentReader(const Json& object) : m_object(object) {}

  template <class T>
  void field(const char* key, T& value, const DocField& spec = DocField()) {
    const Json* json =
        find(key, spec.presence() == DocField::Presence::Required && !traits::IsOptional<T>::value);
    if (json != nullptr) read(key, *json, value, spec);
  }

  template <class T, class DescribeElement>
  void field(const char* key, std::vector<T>& values, const DocField& spec,
             DescribeElement describeElement) {
    const Json* json = find(key, spec.presence() == DocField::Presence::Required);
    if (json != nullptr) readObjects(key, *json, values, spec, describeElement);
  }

  template <class T>
  void fieldOr(const char* key, T& value, const T& fallback) {
    const Json* json = find(key, false);
    if (json == nullptr) {
      value = fallback;
    } else {
      read(key, *json, value, DocField());
    }
  }

  template <class DescribeMembers>
  void object(const char* key, DescribeMembers describeMembers) {
    const Json* json = find(key, true);
    if (!json->is_object()) throw wrongType(key, JsonExpect::Object, *json);
    DocumentReader reader(*json);
    describeMembers(reader);
  }

  template <class T>
  void keyed(const char* key, std::vector<T>& values, const std::vector<std::string>& keys,
             const char* keyNoun, const DocField& spec = DocField()) {
    const Json* json = find(key, spec.presence() == DocField::Presence::Required);
    if (json == nullptr) return;
    if (!json->is_object()) throw wrongType(key, JsonExpect::Object, *json);
    values.clear();
    for (const std::string& name : keys) {
      const auto it = json->find(name);
      if (it == json->end()) {
        FieldError error;
        error.problem = FieldError::Problem::MissingKey;
        error.field = key;
        error.key = name;
        error.noun = keyNoun;
        throw error;
      }
      if (!it->is_object()) throw badEntry(key, name, JsonExpect::Object, *it);
      T value{};
      DocumentReader reader(*it);
      value.describe(reader);
      values.push_back(std::move(value));
    }
  }

  void require(bool condition, std::string_view message) {
    if (condition) return;
    FieldError error;
    error.problem = FieldError::Problem::Invalid;
    error.value = std::string(message);
    throw error;
  }

 private:
  const Json* find(const char* key, bool required) const {
    const auto it = m_object.find(key);
    if (it != m_object.end()) return &*it;
    if (!required) return nullptr;
    FieldError error;
    error.problem = FieldError::Problem::Missing;
    error.field = key;
    throw error;
  }

  static FieldError wrongType(const char* key, JsonExpect expected, const Json& value) {
    FieldError error;
    error.problem = FieldError::Problem::WrongType;
    error.field = key;
    error.expected = expected;
    error.got = jsonTypeName(value);
    return error;
  }

  static FieldError outOfRange(const char* key, std::string value) {
    FieldError error;
    error.problem = FieldError::Problem::OutOfRange;
    error.field = key;
    error.value = std::move(value);
    return error;
  }

  static FieldError badElement(const char* key, JsonExpect expected, std::string_view noun) {
    FieldError error;
    error.problem = FieldError::Problem::BadElement;
    error.field = key;
    error.expected = expected;
    error.noun = std::string(noun);
    return error;
  }

  static FieldError badEntry(const char* key, const std::string& entry, JsonExpect expected,
                             const Json& value) {
    FieldError error;
    error.problem = FieldError::Problem::BadEntry;
    error.field = key;
    error.key = entry;
    error.expected = expected;
    error.got = jsonTypeName(value);
    return error;
  }

  // An int64 from a JSON integer (not a float such as 120.0); nullopt for another type.
  static std::optional<std::int64_t> int64Of(const char* key, const Json& json) {
    if (json.is_number_unsigned()) {
      const auto raw = json.get<std::uint64_t>();
      if (raw > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        throw outOfRange(key, std::to_string(raw));
      }
      return static_cast<std::int64_t>(raw);
    }
    if (json.is_number_integer()) return json.get<std::int64_t>();
    return std::nullopt;
  }

  static std::optional<double> numberOf(const Json& json, const DocField& spec) {
    if (json.is_number()) return json.get<double>();
    if (spec.isNanAsNull() && json.is_null()) return std::numeric_limits<double>::quiet_NaN();
    return std::nullopt;
  }

  static JsonExpect numberExpected(const DocField& spec) {
    return spec.isNanAsNull() ? JsonExpect::NullableNumber : JsonExpect::Number;
  }

  static void checkAllowed(const char* key, const std::string& value, const DocField& spec) {
    const std::string_view allowed = spec.allowed();
    if (allowed.empty()) return;
    std::size_t begin = 0;
    while (begin <= allowed.size()) {
      std::size_t end = allowed.find('|', begin);
      if (end == std::string_view::npos) end = allowed.size();
      if (allowed.substr(begin, end - begin) == value) return;
      begin = end + 1;
    }
    FieldError error;
    error.problem = FieldError::Problem::NotAllowed;
    error.field = key;
    error.value = value;
    error.allowed = std::string(allowed);
    throw error;
  }

  template <class T>
  static void read(const char* key, const Json& json, T& value, const DocField& spec) {
    if constexpr (traits::IsOptional<T>::value) {
      typename T::value_type present{};
      read(key, json, present, spec);
      value = std::move(present);
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!json.is_boolean()) throw wrongType(key, JsonExpect::Bool, json);
      value = json.get<bool>();
    } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::int64_t>) {
      const std::optional<std::int64_t> integer = int64Of(key, json);
      if (!integer) throw wrongType(key, JsonExpect::Integer, json);
      if constexpr (std::is_same_v<T, int>) {
        if (*integer < std::numeric_limits<int>::min() ||
            *integer > std::numeric_limits<int>::max()) {
          throw outOfRange(key, std::to_string(*integer));
        }
      }
      value = static_cast<T>(*integer);
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
      if (json.is_number_unsigned()) {
        value = json.get<std::uint64_t>();
      } else if (json.is_number_integer() && json.get<std::int64_t>() >= 0) {
        value = static_cast<std::uint64_t>(json.get<std::int64_t>());
      } else {
        throw wrongType(key, JsonExpect::NonNegativeInteger, json);
      }
    } else if constexpr (std::is_same_v<T, double>) {
      const std::optional<double> number = numberOf(json, spec);
      if (!number) throw wrongType(key, numberExpected(spec), json);
      value = *number;
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!json.is_string()) throw wrongType(key, JsonExpect::String, json);
      value = json.get<std::string>();
      checkAllowed(key, value, spec);
    } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> ||
                         traits::IsInt64Array<T>::value) {
      if (!json.is_array()) throw wrongType(key, JsonExpect::Array, json);
      if constexpr (traits::IsInt64Array<T>::value) {
        if (json.size() != value.size()) {
          FieldError error = wrongType(key, JsonExpect::FixedArray, json);
          error.size = value.size();
          throw error;
        }
      } else {
        value.clear();
      }
      std::size_t i = 0;
      for (const Json& element : json) {
        const std::optional<std::int64_t> integer = int64Of(key, element);
        if (!integer) throw badElement(key, JsonExpect::Integer, {});
        if constexpr (traits::IsInt64Array<T>::value) {
          value[i++] = *integer;
        } else {
          value.push_back(*integer);
        }
      }
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      if (!json.is_array()) throw wrongType(key, JsonExpect::Array, json);
      value.clear();
      for (const Json& element : json) {
        const std::optional<double> number = numberOf(element, spec);
        if (!number && !spec.isNanAsNull()) throw badElement(key, JsonExpect::Number, {});
        value.push_back(number.value_or(std::numeric_limits<double>::quiet_NaN()));
      }
    } else if constexpr (std::is_same_v<T, std::vector<std::pair<std::string, double>>>) {
      if (!json.is_object()) throw wrongType(key, JsonExpect::Object, json);
      value.clear();
      value.reserve(json.size());
      for (const auto& [name, entry] : json.items()) {
        const std::optional<double> number = numberOf(entry, spec);
        if (!number) throw badEntry(key, name, numberExpected(spec), entry);
        value.emplace_back(name, *number);
      }
    } else if constexpr (traits::IsVector<T>::value) {
      readObjects(key, json, value, spec,
                  [](auto& reader, auto& element, std::size_t) { element.describe(reader); });
    } else {
      if (!json.is_object()) throw wrongType(key, JsonExpect::Object, json);
      DocumentReader reader(json);
      value.describe(reader);
    }
  }

  template <class T, class DescribeElement>
  static void readObjects(const char* key, const Json& json, std::vector<T>& values,
                          const DocField& spec, DescribeElement describeElement) {
    if (!json.is_array()) throw wrongType(key, JsonExpect::Array, json);
    for (const Json& element : json) {
      if (!element.is_object()) throw badElement(key, JsonExpect::Object, spec.elementNoun());
    }
    values.clear();
    for (std::size_t i = 0; i < json.size(); ++i) {
      T element{};
      DocumentReader reader(json[i]);
      describeElement(reader, element, i);
      values.push_back(std::move(element));
    }
  }

  const Json& m_object;
};

/// The document files' JSON: "version" first, then the fields of `document`.
template <class T>
Json writeVersionedDocument(const T& document, int version) {
  Json object = Json::object();
  object["version"] = version;
  DocumentWriter writer(object);
  describable(document).describe(writer);
  return object;
}

/// Reads a document file's text (readDocumentObject, then the fields of T). Returns nullopt,
/// with `<name>: <reason>` in `error` when given, for anything else. Never throws.
template <class T>
std::optional<T> readVersionedDocument(std::string_view text, int version, std::string_view name,
                                       std::string* error) {
  std::string reason;
  try {
    const Json object = readDocumentObject(text, version);
    T document{};
    DocumentReader reader(object);
    document.describe(reader);
    return document;
  } catch (const FieldError& e) {
    reason = documentErrorText(e);
  } catch (const std::exception& e) {
    reason = e.what();
  }
  if (error != nullptr) *error = std::string(name) + ": " + reason;
  return std::nullopt;
}

}  // namespace tb::core::detail
