#include "trainer/distributed/store_wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace tb::trainer::distributed::wire {
namespace {

void putU32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t getU32(std::string_view in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

// Waits until `fd` is readable or `deadline` passes; false on timeout.
bool readable(int fd, std::optional<Clock::time_point> deadline) {
  for (;;) {
    int wait_ms = -1;
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(std::min<std::int64_t>(left.count() + 1, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, wait_ms);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // the read reports the error
  }
}

ReadResult readExactly(int fd, char* out, std::size_t size,
                       std::optional<Clock::time_point> deadline) {
  std::size_t got = 0;
  while (got < size) {
    if (!readable(fd, deadline)) return ReadResult::TimedOut;
    const ssize_t n = ::recv(fd, out + got, size - got, 0);
    if (n == 0) return ReadResult::Closed;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ReadResult::Closed;
    }
    got += static_cast<std::size_t>(n);
  }
  return ReadResult::Ok;
}

}  // namespace

std::string encode(const Message& message) {
  std::string body(1, static_cast<char>(message.code));
  for (const auto& field : message.fields) {
    putU32(body, static_cast<std::uint32_t>(field.size()));
    body += field;
  }
  std::string out;
  putU32(out, static_cast<std::uint32_t>(body.size()));
  return out + body;
}

std::optional<Message> decode(std::string_view body) {
  if (body.empty()) return std::nullopt;
  Message message;
  message.code = static_cast<std::uint8_t>(body[0]);
  std::size_t at = 1;
  while (at < body.size()) {
    if (body.size() - at < 4) return std::nullopt;
    const std::uint32_t size = getU32(body.substr(at, 4));
    at += 4;
    if (size > body.size() - at) return std::nullopt;
    message.fields.emplace_back(body.substr(at, size));
    at += size;
  }
  return message;
}

std::string int64Field(std::int64_t value) {
  std::string out;
  const auto v = static_cast<std::uint64_t>(value);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

std::optional<std::int64_t> int64Of(std::string_view field) {
  if (field.size() != 8) return std::nullopt;
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(field[i])) << (8 * i);
  return static_cast<std::int64_t>(v);
}

AddressList resolve(const std::string& host, int port, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    *error = ::gai_strerror(rc);
    return AddressList(nullptr, ::freeaddrinfo);
  }
  return AddressList(found, ::freeaddrinfo);
}

bool sendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

ReadResult readMessage(int fd, std::string& body, std::optional<Clock::time_point> deadline) {
  char prefix[4];
  if (const auto r = readExactly(fd, prefix, 4, deadline); r != ReadResult::Ok) return r;
  const std::uint32_t size = getU32(std::string_view(prefix, 4));
  if (size == 0 || size > kMaxMessageBytes) return ReadResult::Malformed;
  body.resize(size);
  return readExactly(fd, body.data(), size, deadline);
}

}  // namespace tb::trainer::distributed::wire
