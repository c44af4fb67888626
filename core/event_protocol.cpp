#include "core/event_protocol.h"

#include "core/version.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

namespace tb::core {
namespace {

using Json = nlohmann::ordered_json;
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

const char* jsonTypeName(const Json& value) {
  if (value.is_number_float()) return "float";
  if (value.is_number()) return "integer";
  return value.type_name();
}

Json encodeDouble(double value) {
  if (!std::isfinite(value)) return Json(nullptr);
  return Json(value);
}

ProtocolError makeError(Kind kind, std::string message) {
  return ProtocolError{kind, std::move(message)};
}

// Reads the fields of one event object. The first problem is kept and later reads become
// no-ops, so decoders read straight through and check ok() once.
class FieldReader {
 public:
  FieldReader(const Json& object, std::string_view type) : m_object(object), m_type(type) {}

  bool ok() const { return !m_error.has_value(); }
  ProtocolError takeError() { return std::move(*m_error); }

  std::string string(const char* name) {
    const Json* value = find(name, true);
    if (value == nullptr) return {};
    if (!value->is_string()) {
      wrongType(name, "a string", *value);
      return {};
    }
    return value->get<std::string>();
  }

  std::string optionalString(const char* name) {
    const Json* value = find(name, false);
    if (value == nullptr) return {};
    if (!value->is_string()) {
      wrongType(name, "a string", *value);
      return {};
    }
    return value->get<std::string>();
  }

  // `allowed` is a '|'-separated list of values.
  std::string oneOf(const char* name, std::string_view allowed) {
    std::string text = string(name);
    if (!ok()) return text;
    std::size_t begin = 0;
    while (begin <= allowed.size()) {
      std::size_t end = allowed.find('|', begin);
      if (end == std::string_view::npos) end = allowed.size();
      if (allowed.substr(begin, end - begin) == text) return text;
      begin = end + 1;
    }
    fail(Kind::WrongFieldType, "field \"" + std::string(name) + "\" in " + std::string(m_type) +
                                   " event has value " + quoteForMessage(text) +
                                   ", expected one of " + std::string(allowed));
    return text;
  }

  std::int64_t int64(const char* name) { return readInt64(find(name, true), name).value_or(0); }

  std::optional<std::int64_t> optionalInt64(const char* name) {
    return readInt64(find(name, false), name);
  }

  int int32(const char* name) {
    const std::optional<std::int64_t> value = readInt64(find(name, true), name);
    if (!value) return 0;
    if (*value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max()) {
      fail(Kind::WrongFieldType, "field \"" + std::string(name) + "\" in " + std::string(m_type) +
                                     " event is out of range: " + std::to_string(*value));
      return 0;
    }
    return static_cast<int>(*value);
  }

  double number(const char* name) {
    const Json* value = find(name, true);
    if (value == nullptr) return 0.0;
    return readDouble(*value, name);
  }

  std::vector<std::pair<std::string, double>> numberMap(const char* name) {
    std::vector<std::pair<std::string, double>> out;
    const Json* value = find(name, true);
    if (value == nullptr) return out;
    if (!value->is_object()) {
      wrongType(name, "an object", *value);
      return out;
    }
    out.reserve(value->size());
    for (const auto& [key, entry] : value->items()) {
      if (!entry.is_number() && !entry.is_null()) {
        fail(Kind::WrongFieldType, "value " + quoteForMessage(key) + " of field \"" +
                                       std::string(name) + "\" in " + std::string(m_type) +
                                       " event must be a number or null, got " +
                                       jsonTypeName(entry));
        return out;
      }
      out.emplace_back(key, readDouble(entry, name));
    }
    return out;
  }

 private:
  const Json* find(const char* name, bool required) {
    if (!ok()) return nullptr;
    const auto it = m_object.find(name);
    if (it == m_object.end()) {
      if (required) {
        fail(Kind::MissingField,
             "missing field \"" + std::string(name) + "\" in " + std::string(m_type) + " event");
      }
      return nullptr;
    }
    return &*it;
  }

  std::optional<std::int64_t> readInt64(const Json* value, const char* name) {
    if (value == nullptr) return std::nullopt;
    if (value->is_number_integer() && !value->is_number_unsigned()) {
      return value->get<std::int64_t>();
    }
    if (value->is_number_unsigned()) {
      const auto raw = value->get<std::uint64_t>();
      if (raw <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return static_cast<std::int64_t>(raw);
      }
      fail(Kind::WrongFieldType, "field \"" + std::string(name) + "\" in " + std::string(m_type) +
                                     " event is out of range: " + std::to_string(raw));
      return std::nullopt;
    }
    wrongType(name, "an integer", *value);
    return std::nullopt;
  }

  double readDouble(const Json& value, const char* name) {
    if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!value.is_number()) {
      wrongType(name, "a number or null", value);
      return 0.0;
    }
    return value.get<double>();
  }

  void wrongType(const char* name, const char* expected, const Json& value) {
    fail(Kind::WrongFieldType, "field \"" + std::string(name) + "\" in " + std::string(m_type) +
                                   " event must be " + expected + ", got " + jsonTypeName(value));
  }

  void fail(Kind kind, std::string message) {
    if (ok()) m_error = makeError(kind, std::move(message));
  }

  const Json& m_object;
  std::string_view m_type;
  std::optional<ProtocolError> m_error;
};

// --- per-type encoders: key order here IS the wire order ---------------------------------

void encodeFields(Json& j, const HelloEvent& e) {
  j["trainer_version"] = e.trainer_version;
  j["torch_version"] = e.torch_version;
  j["protocol"] = e.protocol;
  j["world_size"] = e.world_size;
  j["launcher"] = e.launcher;
  j["device"] = e.device;
  if (!e.device_name.empty()) j["device_name"] = e.device_name;
  if (e.device_memory_bytes > 0) j["device_memory_bytes"] = e.device_memory_bytes;
  j["blas"] = e.blas;
  j["threads"] = e.threads;
  j["interop_threads"] = e.interop_threads;
  j["run_dir"] = e.run_dir;
}

void encodeFields(Json& j, const ProgressEvent& e) {
  j["step"] = e.step;
  j["total"] = e.total;
  j["it_per_s"] = encodeDouble(e.it_per_s);
  j["eta_s"] = encodeDouble(e.eta_s);
}

void encodeFields(Json& j, const MetricEvent& e) {
  j["step"] = e.step;
  Json values = Json::object();
  for (const auto& [name, value] : e.values) values[name] = encodeDouble(value);
  j["values"] = std::move(values);
}

void encodeFields(Json& j, const SampleEvent& e) {
  j["step"] = e.step;
  j["kind"] = e.kind;
  j["path"] = e.path;
}

void encodeFields(Json& j, const CheckpointEvent& e) {
  j["step"] = e.step;
  j["path"] = e.path;
}

void encodeFields(Json& j, const LogEvent& e) {
  j["level"] = e.level;
  j["text"] = e.text;
}

void encodeFields(Json& j, const WarningEvent& e) {
  j["code"] = e.code;
  j["message"] = e.message;
  if (e.step) j["step"] = *e.step;
}

void encodeFields(Json& j, const ErrorEvent& e) {
  j["code"] = e.code;
  j["message"] = e.message;
  j["hint"] = e.hint;
}

void encodeFields(Json& j, const DoneEvent& e) {
  j["status"] = e.status;
  if (e.step) j["step"] = *e.step;
}

// --- per-type decoders -----------------------------------------------------------------

Event decodeFields(FieldReader& r, HelloEvent e) {
  e.trainer_version = r.string("trainer_version");
  e.torch_version = r.string("torch_version");
  e.protocol = r.int32("protocol");
  e.world_size = r.int32("world_size");
  e.launcher = r.string("launcher");
  e.device = r.string("device");
  e.device_name = r.optionalString("device_name");
  e.device_memory_bytes = r.optionalInt64("device_memory_bytes").value_or(0);
  e.blas = r.string("blas");
  e.threads = r.int32("threads");
  e.interop_threads = r.int32("interop_threads");
  e.run_dir = r.string("run_dir");
  return e;
}

Event decodeFields(FieldReader& r, ProgressEvent e) {
  e.step = r.int64("step");
  e.total = r.int64("total");
  e.it_per_s = r.number("it_per_s");
  e.eta_s = r.number("eta_s");
  return e;
}

Event decodeFields(FieldReader& r, MetricEvent e) {
  e.step = r.int64("step");
  e.values = r.numberMap("values");
  return e;
}

Event decodeFields(FieldReader& r, SampleEvent e) {
  e.step = r.int64("step");
  e.kind = r.string("kind");
  e.path = r.string("path");
  return e;
}

Event decodeFields(FieldReader& r, CheckpointEvent e) {
  e.step = r.int64("step");
  e.path = r.string("path");
  return e;
}

Event decodeFields(FieldReader& r, LogEvent e) {
  e.level = r.oneOf("level", "debug|info|warning|error");
  e.text = r.string("text");
  return e;
}

Event decodeFields(FieldReader& r, WarningEvent e) {
  e.code = r.string("code");
  e.message = r.string("message");
  e.step = r.optionalInt64("step");
  return e;
}

Event decodeFields(FieldReader& r, ErrorEvent e) {
  e.code = r.string("code");
  e.message = r.string("message");
  e.hint = r.string("hint");
  return e;
}

Event decodeFields(FieldReader& r, DoneEvent e) {
  e.status = r.oneOf("status", "completed|stopped|failed");
  e.step = r.optionalInt64("step");
  return e;
}

template <std::size_t I = 0>
std::optional<Event> defaultEventOfType(std::string_view type) {
  if constexpr (I < std::variant_size_v<Event>) {
    Event candidate{std::in_place_index<I>};
    if (eventTypeName(candidate) == type) return candidate;
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

  FieldReader reader(object, type);
  Event decoded =
      std::visit([&](auto& empty) { return decodeFields(reader, std::move(empty)); }, *event);
  if (!reader.ok()) return {reader.takeError()};
  return {std::move(decoded)};
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
  return std::visit(
      [](const auto& e) -> std::string_view {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, HelloEvent>) return "hello";
        if constexpr (std::is_same_v<T, ProgressEvent>) return "progress";
        if constexpr (std::is_same_v<T, MetricEvent>) return "metric";
        if constexpr (std::is_same_v<T, SampleEvent>) return "sample";
        if constexpr (std::is_same_v<T, CheckpointEvent>) return "checkpoint";
        if constexpr (std::is_same_v<T, LogEvent>) return "log";
        if constexpr (std::is_same_v<T, WarningEvent>) return "warning";
        if constexpr (std::is_same_v<T, ErrorEvent>) return "error";
        if constexpr (std::is_same_v<T, DoneEvent>) return "done";
      },
      event);
}

std::string encodeEvent(const Event& event) {
  Json j = Json::object();
  j["v"] = kProtocolVersion;
  j["type"] = std::string(eventTypeName(event));
  std::visit([&](const auto& e) { encodeFields(j, e); }, event);
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
