#pragma once
// Control protocol v1: what the front end writes on the trainer's stdin (`train
// --control-stdin`). The other half of the wire from core/event_protocol.h, framed the same way:
// NDJSON, one compact JSON object per line, `"v":1,"type":"<type>"`.
//
//   {"v":1,"type":"stop"}        finish the current step, write a checkpoint, exit "stopped"
//   {"v":1,"type":"checkpoint"}  write a checkpoint at the end of the current step, go on
//
// The end of stdin means the same as "stop" (the parent is gone). Readers accept a line without
// "v" (what front ends before the version wrote) and ignore fields they do not know. Both
// processes use this one implementation and are tested against tests/golden/control_v1.ndjson.

#include <optional>
#include <string>
#include <string_view>

namespace tb::core {

/// Version of the control lines this build writes and reads.
inline constexpr int kControlProtocolVersion = 1;

/// What the front end asks of a running trainer.
enum class ControlMessage {
  Stop,        ///< stop at the end of the current step, with a checkpoint
  Checkpoint,  ///< write a checkpoint at the end of the current step and continue
};

/// Wire name of `message`: "stop" or "checkpoint".
std::string_view controlMessageName(ControlMessage message);

/// One line, compact, without the trailing '\n', e.g. `{"v":1,"type":"stop"}`.
std::string encodeControlMessage(ControlMessage message);

/// Decodes one line (without its '\n'; a trailing '\r' is ignored). Returns nullopt, with the
/// reason in `error` when given (e.g. `unknown control message type "pause"`), for anything
/// that is not a v1 (or unversioned) stop/checkpoint object. Never throws.
std::optional<ControlMessage> decodeControlLine(std::string_view line,
                                                std::string* error = nullptr);

}  // namespace tb::core
