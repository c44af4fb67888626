#include "core/event_protocol.h"

#include "core/detail/document_json.h"
#include "core/version.h"

#include <nlohmann/json.hpp>

namespace tb::core {
namespace {

using detail::Json;
using detail::jsonTypeName;
using Kind = ProtocolError::Kind;

constexpr std::size_t kMaxQuotedBytes = 64;

// Error messages may quote strings from the line; keep them short, and cut on a UTF-8 character
// boundary so the message itself stays valid UTF-8.
std::string quoteForMessage(std::string_view text) {
  std::string out = "\"";
  if (text.size() <= kMaxQuotedBytes) {
    out.append(text);
  } else {
    std::size_t cut = kMaxQuotedBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    out.append(text.substr(0, cut));
    out.append("...");
  }
  out.append("\"");
  return out;
}

ProtocolError makeError(Kind kind, std::string message) {
  return ProtocolError{kind, std::move(message)};
}

// "an integer", as in `field "step" in checkpoint event must be an integer, got string`.
const char* expectedText(detail::JsonExpect expected) {
  switch (expected) {
    case detail::JsonExpect::Integer:
      return "an integer";
    case detail::JsonExpect::NullableNumber:
      return "a number or null";
    case detail::JsonExpect::String:
      return "a string";
    case detail::JsonExpect::Object:
      return "an object";
    default:  // no v1 event field has another type
      return "a valid value";
  }
}

// A refused field in the protocol's words: `missing field "step" in progress event`.
ProtocolError fieldError(const detail::FieldError& error, std::string_view type) {
  using Problem = detail::FieldError::Problem;
  const std::string field = "field \"" + error.field + "\" in " + std::string(type) + " event";
  switch (error.problem) {
    case Problem::Missing:
      return makeError(Kind::MissingField, "missing " + field);
    case Problem::WrongType:
      return makeError(Kind::WrongFieldType,
                       field + " must be " + expectedText(error.expected) + ", got " + error.got);
    case Problem::OutOfRange:
      return makeError(Kind::WrongFieldType, field + " is out of range: " + error.value);
    case Problem::NotAllowed:
      return makeError(Kind::WrongFieldType, field + " has value " + quoteForMessage(error.value) +
                                                 ", expected one of " + error.allowed);
    case Problem::BadEntry:
      return makeError(Kind::WrongFieldType,
                       "value " + quoteForMessage(error.key) + " of " + field + " must be " +
                           expectedText(error.expected) + ", got " + error.got);
    default:  // lists, keyed objects and document rules: no v1 event has them
      return makeError(Kind::WrongFieldType, field + ": " + detail::documentErrorText(error));
  }
}

template <std::size_t I = 0>
std::optional<Event> defaultEventOfType(std::string_view type) {
  if constexpr (I < std::variant_size_v<Event>) {
    if (std::variant_alternative_t<I, Event>::kType == type) return Event{std::in_place_index<I>};
    return defaultEventOfType<I + 1>(type);
  } else {
    return std::nullopt;
  }
}

DecodeResult decodeObject(const Json& object) {
  const auto version = object.find("v");
  if (version == object.end()) {
    return {makeError(Kind::MissingField, "missing field \"v\" (protocol version)")};
  }
  if (!version->is_number_integer()) {
    return {makeError(Kind::WrongFieldType, std::string("field \"v\" must be an integer, got ") +
                                                jsonTypeName(*version))};
  }
  // Compare as text-free integers: a huge unsigned or a negative "v" is just another version.
  const bool isOne =
      version->is_number_unsigned()
          ? version->get<std::uint64_t>() == static_cast<std::uint64_t>(kProtocolVersion)
          : version->get<std::int64_t>() == kProtocolVersion;
  if (!isOne) {
    return {makeError(Kind::WrongVersion, "unsupported protocol version " + version->dump() +
                                              " (this build speaks " +
                                              std::to_string(kProtocolVersion) + ")")};
  }

  const auto typeIt = object.find("type");
  if (typeIt == object.end()) return {makeError(Kind::MissingField, "missing field \"type\"")};
  if (!typeIt->is_string()) {
    return {makeError(Kind::WrongFieldType, std::string("field \"type\" must be a string, got ") +
                                                jsonTypeName(*typeIt))};
  }
  const std::string& type = typeIt->get_ref<const std::string&>();
  std::optional<Event> event = defaultEventOfType(type);
  if (!event) return {makeError(Kind::UnknownType, "unknown event type " + quoteForMessage(type))};

  try {
    detail::DocumentReader reader(object);
    std::visit([&](auto& e) { e.describe(reader); }, *event);
  } catch (const detail::FieldError& error) {
    return {fieldError(error, type)};
  }
  return {std::move(*event)};
}

}  // namespace

std::string_view protocolErrorKindName(ProtocolError::Kind kind) {
  switch (kind) {
    case Kind::Malformed:
      return "malformed";
    case Kind::NotAnObject:
      return "not_an_object";
    case Kind::WrongVersion:
      return "wrong_version";
    case Kind::UnknownType:
      return "unknown_type";
    case Kind::MissingField:
      return "missing_field";
    case Kind::WrongFieldType:
      return "wrong_field_type";
    case Kind::Oversized:
      return "oversized";
  }
  return "unknown";
}

std::string_view eventTypeName(const Event& event) {
  return std::visit([](const auto& e) { return e.kType; }, event);
}

std::string encodeEvent(const Event& event) {
  Json j = Json::object();
  j["v"] = kProtocolVersion;
  j["type"] = std::string(eventTypeName(event));
  detail::DocumentWriter writer(j);
  std::visit([&](const auto& e) { detail::describable(e).describe(writer); }, event);
  // replace: a path with non-UTF-8 bytes must not make the trainer throw mid-run.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

int jsonNestingDepth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool inString = false;
  bool escaped = false;
  for (const char c : text) {
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
      }
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return limit + 1;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

DecodeResult decodeEventLine(std::string_view line) {
  if (line.size() > kMaxEventLineBytes) {
    return {makeError(Kind::Oversized, "line is " + std::to_string(line.size()) +
                                           " bytes, over the " +
                                           std::to_string(kMaxEventLineBytes) + "-byte limit")};
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return {makeError(Kind::Malformed, "empty line")};
  // The parser itself is iterative, but everything that walks a value afterwards (dump,
  // comparisons) recurses: refuse hostile nesting before a value exists.
  if (jsonNestingDepth(line) > kMaxEventNestingDepth) {
    return {makeError(Kind::Malformed, "JSON nested deeper than " +
                                           std::to_string(kMaxEventNestingDepth) + " levels")};
  }
  try {
    Json parsed;
    try {
      parsed = Json::parse(line.begin(), line.end());
    } catch (const Json::parse_error& e) {
      return {makeError(Kind::Malformed, "malformed JSON at byte " + std::to_string(e.byte))};
    } catch (const Json::exception&) {
      // out_of_range.406: a number such as 1e999 that does not fit a double.
      return {makeError(Kind::Malformed, "malformed JSON: number out of range")};
    }
    if (!parsed.is_object()) {
      return {makeError(Kind::NotAnObject,
                        std::string("expected a JSON object, got ") + jsonTypeName(parsed))};
    }
    return decodeObject(parsed);
  } catch (const std::exception& e) {
    // Not expected (bad_alloc at worst); the decoder's promise is to never throw.
    return {makeError(Kind::Malformed, std::string("cannot decode line: ") + e.what())};
  }
}

DecodeResult decodeEventLine(const EventLineSplitter::Line& line) {
  if (line.oversized) {
    return {makeError(Kind::Oversized, "line over the " + std::to_string(kMaxEventLineBytes) +
                                           "-byte limit was discarded")};
  }
  return decodeEventLine(std::string_view(line.text));
}

EventLineSplitter::EventLineSplitter(std::size_t maxLineBytes) : m_maxLineBytes(maxLineBytes) {}

std::vector<EventLineSplitter::Line> EventLineSplitter::feed(std::string_view bytes) {
  std::vector<Line> lines;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const std::size_t newline = bytes.find('\n', pos);
    const std::size_t end = newline == std::string_view::npos ? bytes.size() : newline;
    const std::string_view piece = bytes.substr(pos, end - pos);
    if (!m_discarding) {
      if (m_buffer.size() + piece.size() > m_maxLineBytes) {
        // Report now rather than at the '\n': a flood without newlines must be visible at once.
        m_discarding = true;
        m_buffer.clear();
        m_buffer.shrink_to_fit();
        ++m_oversizedLines;
        lines.push_back(Line{{}, true});
      } else {
        m_buffer.append(piece);
      }
    }
    if (newline == std::string_view::npos) break;
    if (!m_discarding) lines.push_back(Line{std::move(m_buffer), false});
    m_buffer.clear();
    m_discarding = false;
    pos = newline + 1;
  }
  return lines;
}

std::optional<EventLineSplitter::Line> EventLineSplitter::flush() {
  const bool hadPartial = !m_discarding && !m_buffer.empty();
  std::optional<Line> out;
  if (hadPartial) out = Line{std::move(m_buffer), false};
  m_buffer.clear();
  m_discarding = false;
  return out;
}

}  // namespace tb::core
