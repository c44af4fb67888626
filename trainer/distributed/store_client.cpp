#include "trainer/distributed/store_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

namespace tb::trainer::distributed {

using wire::Clock;
using wire::Message;
using wire::Op;
using wire::Status;

namespace {

std::string seconds(std::chrono::milliseconds ms) {
  const auto s = static_cast<double>(ms.count()) / 1000.0;
  char buf[32];
  std::snprintf(buf, sizeof buf,
                s == static_cast<double>(static_cast<long long>(s)) ? "%.0f" : "%.1f", s);
  return buf;
}

std::string field(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }
std::vector<uint8_t> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }

Message request(Op op, std::vector<std::string> fields) {
  return Message{static_cast<std::uint8_t>(op), std::move(fields)};
}

// Connects `fd` (non-blocking) to `addr` by `deadline`: 0, or the errno that ended it
// (ETIMEDOUT when the deadline passed first).
int connectBy(int fd, const sockaddr* addr, socklen_t size, Clock::time_point deadline) {
  if (::connect(fd, addr, size) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLOUT, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, 1000)));
    if (n < 0 && errno != EINTR) return errno;
    if (n == 0 && left <= 0) return ETIMEDOUT;
    if (n > 0) {
      int error = 0;
      socklen_t len = sizeof error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
      return error;
    }
  }
}

}  // namespace

StoreClient::StoreClient(std::string host, int port, std::chrono::milliseconds timeout)
    : c10d::Store(timeout),
      m_host(std::move(host)),
      m_port(port),
      m_address(m_host + ":" + std::to_string(port)) {
  std::lock_guard<std::mutex> lock(m_mutex);
  connect(Clock::now() + timeout);
}

StoreClient::~StoreClient() { disconnect(); }

void StoreClient::disconnect() {
  const int fd = m_fd.exchange(-1);
  if (fd >= 0) ::close(fd);
}

void StoreClient::interrupt() {
  m_interrupted.store(true);
  const int fd = m_fd.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

// Refused connections are retried until the deadline (the server may not be listening yet);
// silence is waited out once.
void StoreClient::connect(Clock::time_point deadline) {
  const auto started = Clock::now();
  std::string unresolved;
  const wire::AddressList found = wire::resolve(m_host, m_port, &unresolved);
  if (!found) throw StoreUnreachable("cannot resolve " + m_host + ": " + unresolved, true);
  int error = 0;
  bool refused = false;  // a retry that the deadline cut short was still a refusal
  while (!m_interrupted.load()) {
    for (const addrinfo* a = found.get(); a != nullptr; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) {
        error = errno;
        continue;
      }
      error = connectBy(fd, a->ai_addr, a->ai_addrlen, deadline);
      if (error == 0) {
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        // A send that the far end stops taking (a cut link with a full buffer) fails too.
        const timeval limit{static_cast<time_t>(kReplyTimeout.count() / 1000), 0};
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
        m_fd = fd;
        return;
      }
      ::close(fd);
    }
    refused = refused || error == ECONNREFUSED;
    if (error != ECONNREFUSED || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (m_interrupted.load()) throw StoreUnreachable("the store connection was closed", true);
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  if (refused && error == ETIMEDOUT) error = ECONNREFUSED;
  if (error == ETIMEDOUT || error == EHOSTUNREACH || error == ENETUNREACH) {
    throw StoreUnreachable("no answer from " + m_address + " for " + seconds(waited) + " s (" +
                               std::strerror(error) + "): the network link or that machine is down",
                           false);
  }
  throw StoreUnreachable("cannot connect to " + m_address + " (" + std::strerror(error) +
                             (error == ECONNREFUSED ? ", for " + seconds(waited) + " s" : "") +
                             "): nothing serves the store there",
                         true);
}

std::vector<std::string> StoreClient::call(const Message& message,
                                           std::chrono::milliseconds waits_for,
                                           const std::string& what) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_interrupted.load()) throw StoreUnreachable("the store connection was closed", true);
  const auto deadline = Clock::now() + waits_for + kReplyTimeout;
  if (m_fd < 0) connect(std::min(deadline, Clock::now() + kReplyTimeout));
  if (!wire::sendAll(m_fd, wire::encode(message))) {
    const int error = errno;
    disconnect();
    const bool silent = error == EAGAIN || error == EWOULDBLOCK;
    throw StoreUnreachable(
        silent
            ? "the store at " + m_address + " took no request for " + seconds(kReplyTimeout) +
                  " s: the network link or that machine is down"
            : "the store at " + m_address + " closed the connection (" + std::strerror(error) + ")",
        !silent);
  }
  std::string body;
  switch (wire::readMessage(m_fd, body, deadline)) {
    case wire::ReadResult::Ok:
      break;
    case wire::ReadResult::TimedOut:
      disconnect();  // a late answer must not be taken for the next request's
      throw StoreUnreachable("the store at " + m_address + " has not answered for " +
                                 seconds(waits_for + kReplyTimeout) +
                                 " s: the network link or that machine is down",
                             false);
    case wire::ReadResult::Closed:
      disconnect();
      throw StoreUnreachable("the store at " + m_address +
                                 " closed the connection: the process that served it has exited",
                             true);
    case wire::ReadResult::Malformed:
      disconnect();
      throw StoreUnreachable("the store at " + m_address + " sent a malformed reply", true);
  }
  auto reply = wire::decode(body);
  if (!reply || reply->code == static_cast<std::uint8_t>(Status::Refused)) {
    disconnect();
    throw StoreUnreachable("the store at " + m_address + " refused a request (" + what + ")", true);
  }
  if (reply->code == static_cast<std::uint8_t>(Status::TimedOut)) {
    throw std::runtime_error("timed out after " + seconds(waits_for) + " s waiting for " + what +
                             " in the store at " + m_address);
  }
  return std::move(reply->fields);
}

void StoreClient::set(const std::string& key, const std::vector<uint8_t>& value) {
  call(request(Op::Set, {key, field(value)}), std::chrono::milliseconds(0), "set " + key);
}

std::vector<uint8_t> StoreClient::compareSet(const std::string& key,
                                             const std::vector<uint8_t>& expected,
                                             const std::vector<uint8_t>& desired) {
  const auto f = call(request(Op::CompareSet, {key, field(expected), field(desired)}),
                      std::chrono::milliseconds(0), "compare-set " + key);
  return f.empty() ? std::vector<uint8_t>{} : bytesOf(f[0]);
}

std::vector<uint8_t> StoreClient::get(const std::string& key) {
  const auto f =
      call(request(Op::Get, {key, wire::int64Field(timeout_.count())}), timeout_, "key " + key);
  return f.empty() ? std::vector<uint8_t>{} : bytesOf(f[0]);
}

int64_t StoreClient::add(const std::string& key, int64_t value) {
  const auto f = call(request(Op::Add, {key, wire::int64Field(value)}),
                      std::chrono::milliseconds(0), "add " + key);
  return f.empty() ? 0 : wire::int64Of(f[0]).value_or(0);
}

bool StoreClient::deleteKey(const std::string& key) {
  const auto f = call(request(Op::Delete, {key}), std::chrono::milliseconds(0), "delete " + key);
  return !f.empty() && wire::int64Of(f[0]).value_or(0) != 0;
}

bool StoreClient::check(const std::vector<std::string>& keys) {
  const auto f = call(request(Op::Check, keys), std::chrono::milliseconds(0), "check");
  return !f.empty() && wire::int64Of(f[0]).value_or(0) != 0;
}

int64_t StoreClient::getNumKeys() {
  const auto f = call(request(Op::Count, {}), std::chrono::milliseconds(0), "count");
  return f.empty() ? 0 : wire::int64Of(f[0]).value_or(0);
}

void StoreClient::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void StoreClient::wait(const std::vector<std::string>& keys,
                       const std::chrono::milliseconds& timeout) {
  std::vector<std::string> fields{wire::int64Field(timeout.count())};
  fields.insert(fields.end(), keys.begin(), keys.end());
  std::string names;
  for (const auto& k : keys) names += (names.empty() ? "key " : ", ") + k;
  call(request(Op::Wait, std::move(fields)), timeout, names);
}

c10::intrusive_ptr<c10d::Store> StoreClient::clone() {
  return c10::make_intrusive<StoreClient>(m_host, m_port, timeout_);
}

}  // namespace tb::trainer::distributed
