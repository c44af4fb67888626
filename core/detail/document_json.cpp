#include "core/detail/document_json.h"

#include "core/config_io.h"

#include <stdexcept>

namespace tb::core::detail {
namespace {

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

// "an integer", as in `"files" is not an integer`.
std::string expectedText(const FieldError& error) {
  switch (error.expected) {
    case JsonExpect::Bool:
      return "true or false";
    case JsonExpect::Integer:
      return "an integer";
    case JsonExpect::NonNegativeInteger:
      return "a non-negative integer";
    case JsonExpect::Number:
    case JsonExpect::NullableNumber:
      return "a number";
    case JsonExpect::String:
      return "a string";
    case JsonExpect::Array:
      return "an array";
    case JsonExpect::FixedArray:
      return "an array of " + std::to_string(error.size);
    case JsonExpect::Object:
      return "an object";
  }
  return "a value";
}

// "non-integer", as in `"token_grid" holds a non-integer`.
const char* elementText(JsonExpect expected) {
  switch (expected) {
    case JsonExpect::Integer:
      return "non-integer";
    case JsonExpect::Number:
      return "non-number";
    case JsonExpect::Object:
      return "non-object";
    default:
      return "bad value";
  }
}

}  // namespace

const char* jsonTypeName(const Json& value) {
  if (value.is_number_float()) return "float";
  if (value.is_number()) return "integer";
  return value.type_name();
}

std::string documentErrorText(const FieldError& error) {
  const std::string field = quoted(error.field);
  switch (error.problem) {
    case FieldError::Problem::Missing:
      return "missing " + field;
    case FieldError::Problem::WrongType:
      return field + " is not " + expectedText(error);
    case FieldError::Problem::OutOfRange:
      return field + " is out of range: " + error.value;
    case FieldError::Problem::NotAllowed:
      return field + " is " + quoted(error.value) + ", not one of " + error.allowed;
    case FieldError::Problem::BadElement:
      if (!error.noun.empty()) return error.noun + " is not " + expectedText(error);
      return field + " holds a " + elementText(error.expected);
    case FieldError::Problem::BadEntry:
      return field + ": " + quoted(error.key) + " is not " + expectedText(error);
    case FieldError::Problem::MissingKey:
      return field + " has nothing for " + error.noun + " " + quoted(error.key);
    case FieldError::Problem::Invalid:
      return error.value;
  }
  return "unreadable " + field;
}

Json readDocumentObject(std::string_view text, int version) {
  Json doc;
  if (const auto problem = readConfigDocument(text, doc)) {
    throw std::runtime_error(problem->message);
  }
  if (!doc.is_object()) throw std::runtime_error("not a JSON object");
  if (const auto v = doc.find("version"); v != doc.end() && *v != Json(version)) {
    throw std::runtime_error("version " + v->dump() + ", this build reads " +
                             std::to_string(version));
  }
  return doc;
}

}  // namespace tb::core::detail
