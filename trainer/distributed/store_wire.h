#pragma once
// The wire format of Tokenbench's rendezvous store (StoreServer and StoreClient): a message is a
// 4-byte little-endian length, then a one-byte code (the operation, or the status of a reply),
// then fields, each a 4-byte length and its bytes. Integers travel as 8-byte little-endian
// fields. Torch-free: the server runs in the launcher.

#include <netdb.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tb::trainer::distributed::wire {

using Clock = std::chrono::steady_clock;

/// What a request asks. Fields: Set key value; Get key timeout_ms; Add key delta; CompareSet
/// key expected desired; Delete key; Check key...; Count; Wait timeout_ms key....
enum class Op : std::uint8_t { Set = 1, Get, Add, CompareSet, Delete, Check, Count, Wait };
/// How a reply begins: Ok (fields follow), TimedOut (a Get or Wait whose keys did not appear in
/// time), Refused (a malformed request; the server closes the connection).
enum class Status : std::uint8_t { Ok = 0, TimedOut = 1, Refused = 2 };

/// Rendezvous keys and values are small (addresses, NCCL ids); anything larger is refused, so a
/// stranger's connection cannot make the server allocate without bound.
inline constexpr std::uint32_t kMaxMessageBytes = 16u << 20;

struct Message {
  std::uint8_t code = 0;
  std::vector<std::string> fields;
};

/// The message with its length prefix.
std::string encode(const Message& message);
/// A message body (after the length prefix); nullopt when it is malformed.
std::optional<Message> decode(std::string_view body);

std::string int64Field(std::int64_t value);
/// nullopt unless `field` is 8 bytes.
std::optional<std::int64_t> int64Of(std::string_view field);

/// The TCP addresses of host:port (numeric or a name), freed with the list.
using AddressList = std::unique_ptr<addrinfo, void (*)(addrinfo*)>;
/// Empty, with getaddrinfo's reason in `error`, when `host` does not resolve.
AddressList resolve(const std::string& host, int port, std::string* error);

/// Writes all of `bytes`; false when the peer is gone.
bool sendAll(int fd, std::string_view bytes);

enum class ReadResult { Ok, Closed, TimedOut, Malformed };
/// Reads one message body into `body`, waiting until `deadline` (none: as long as it takes).
ReadResult readMessage(int fd, std::string& body, std::optional<Clock::time_point> deadline);

}  // namespace tb::trainer::distributed::wire
