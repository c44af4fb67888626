#include "core/control_message.h"

#include "core/event_protocol.h"

#include <nlohmann/json.hpp>

namespace tb::core {
namespace {

std::optional<ControlMessage> fail(std::string* error, std::string why) {
  if (error != nullptr) *error = std::move(why);
  return std::nullopt;
}

}  // namespace

std::string_view controlMessageName(ControlMessage message) {
  switch (message) {
    case ControlMessage::Stop:
      return "stop";
    case ControlMessage::Checkpoint:
      return "checkpoint";
  }
  return "stop";
}

std::string encodeControlMessage(ControlMessage message) {
  return "{\"v\":" + std::to_string(kControlProtocolVersion) + ",\"type\":\"" +
         std::string(controlMessageName(message)) + "\"}";
}

std::optional<ControlMessage> decodeControlLine(std::string_view line, std::string* error) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > kMaxEventLineBytes || jsonNestingDepth(line) > kMaxEventNestingDepth) {
    return fail(error, "control line too long or too deeply nested");
  }
  const nlohmann::json doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return fail(error, "control line is not a JSON object");
  if (const auto v = doc.find("v"); v != doc.end()) {
    if (!v->is_number_integer() || v->get<long long>() != kControlProtocolVersion) {
      return fail(error, "control protocol version " + v->dump() + ", this trainer reads " +
                             std::to_string(kControlProtocolVersion));
    }
  }
  const auto type = doc.find("type");
  if (type == doc.end() || !type->is_string()) {
    return fail(error, "control line has no string \"type\"");
  }
  for (ControlMessage message : {ControlMessage::Stop, ControlMessage::Checkpoint}) {
    if (type->get<std::string>() == controlMessageName(message)) return message;
  }
  return fail(error, "unknown control message type " + type->dump());
}

}  // namespace tb::core
