#include "trainer/distributed/store_server.h"

#include "trainer/distributed/launch_environment.h"
#include "trainer/distributed/store_wire.h"
#include "trainer/user_error.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tb::trainer::distributed {

using wire::Clock;
using wire::Message;
using wire::Op;
using wire::Status;

struct StoreServer::Connection {
  int fd = -1;
  std::atomic<bool> done{false};
  std::thread thread;
};

namespace {

// Beyond this many connections at once, new ones are closed at once (a run has two or three
// per rank).
constexpr std::size_t kMaxConnections = 8192;

std::string numericHost(const sockaddr* addr, socklen_t size) {
  char host[NI_MAXHOST] = {};
  if (::getnameinfo(addr, size, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return "?";
  return host;
}

bool isLoopbackAddress(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
           (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127);
  }
  return false;
}

[[noreturn]] void cannotListen(const std::string& where, const std::string& why,
                               const std::string& hint) {
  throw UserError("rank_group_failed", "cannot serve the rendezvous store on " + where + ": " + why,
                  hint);
}

// A socket listening on `addr`; -1 with errno set when bind or listen fail.
int listenOn(const sockaddr* addr, socklen_t size) {
  const int fd = ::socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, addr, size) != 0 || ::listen(fd, 512) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int boundPort(int fd) {
  sockaddr_storage bound{};
  socklen_t size = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size);
  return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

std::int64_t asInteger(const std::string& value) {
  try {
    return std::stoll(value);
  } catch (const std::exception&) {
    return 0;
  }
}

std::string reply(Status status, std::vector<std::string> fields = {}) {
  return wire::encode(Message{static_cast<std::uint8_t>(status), std::move(fields)});
}

}  // namespace

StoreServer::StoreServer(const std::string& address, int port) {
  const std::string where = address + ":" + std::to_string(port);
  std::string unresolved;
  const wire::AddressList found = wire::resolve(address, port, &unresolved);
  if (!found) {
    cannotListen(where, "cannot resolve " + address + ": " + unresolved,
                 "set distributed.master_addr (or MASTER_ADDR) to an address of node 0");
  }
  bool only_loopback = true;
  for (const addrinfo* a = found.get(); a != nullptr; a = a->ai_next)
    only_loopback = only_loopback && isLoopbackAddress(a->ai_addr);

  if (only_loopback && !namesLoopback(address)) {
    // The other nodes resolve the name to an address this machine has on the network, which
    // this machine does not know it by: only every interface reaches it.
    sockaddr_in6 any6{};
    any6.sin6_family = AF_INET6;
    any6.sin6_addr = in6addr_any;
    any6.sin6_port = htons(static_cast<std::uint16_t>(port));
    m_listen_fd = listenOn(reinterpret_cast<sockaddr*>(&any6), sizeof any6);
    if (m_listen_fd < 0 && errno == EAFNOSUPPORT) {  // a kernel without IPv6
      sockaddr_in any4{};
      any4.sin_family = AF_INET;
      any4.sin_addr.s_addr = htonl(INADDR_ANY);
      any4.sin_port = htons(static_cast<std::uint16_t>(port));
      m_listen_fd = listenOn(reinterpret_cast<sockaddr*>(&any4), sizeof any4);
    }
    if (m_listen_fd < 0) {
      cannotListen(where, std::strerror(errno), "choose another distributed.master_port");
    }
    m_port = boundPort(m_listen_fd);
    m_listening_on = "every interface, port " + std::to_string(m_port) + " (" + address +
                     " resolves to loopback on this node; set distributed.master_addr to node "
                     "0's network address to listen there only)";
  } else {
    int error = 0;
    for (const addrinfo* a = found.get(); a != nullptr && m_listen_fd < 0; a = a->ai_next) {
      m_listen_fd = listenOn(a->ai_addr, a->ai_addrlen);
      if (m_listen_fd < 0) {
        error = errno;
        continue;
      }
      m_port = boundPort(m_listen_fd);
      m_listening_on = numericHost(a->ai_addr, a->ai_addrlen);
      if (a->ai_family == AF_INET6) m_listening_on = "[" + m_listening_on + "]";
      m_listening_on += ":" + std::to_string(m_port);
    }
    if (m_listen_fd < 0) {
      if (error == EADDRNOTAVAIL) {
        cannotListen(where, address + " is not an address of this machine",
                     "node 0 serves the store: run node_rank 0 on the machine distributed."
                     "master_addr names, or set master_addr to one of node 0's addresses");
      }
      cannotListen(where, std::strerror(error),
                   error == EADDRINUSE ? "choose another distributed.master_port"
                                       : "check distributed.master_addr and master_port");
    }
  }
  if (::pipe2(m_wake, O_CLOEXEC) != 0) {
    ::close(m_listen_fd);
    cannotListen(where, std::string("pipe: ") + std::strerror(errno), "");
  }
  m_acceptor = std::thread([this] { acceptLoop(); });
}

StoreServer::~StoreServer() {
  m_stopping.store(true);
  (void)!::write(m_wake[1], "x", 1);
  if (m_acceptor.joinable()) m_acceptor.join();
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    for (auto& c : m_connections) ::shutdown(c->fd, SHUT_RDWR);
  }
  m_changed.notify_all();
  for (auto& c : m_connections) {
    if (c->thread.joinable()) c->thread.join();
    ::close(c->fd);
  }
  ::close(m_listen_fd);
  ::close(m_wake[0]);
  ::close(m_wake[1]);
}

void StoreServer::acceptLoop() {
  while (!m_stopping.load()) {
    pollfd p[2] = {{m_listen_fd, POLLIN, 0}, {m_wake[0], POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) continue;
    if (p[1].revents != 0) return;
    if (p[0].revents == 0) continue;
    const int fd = ::accept4(m_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(m_mutex);
    // Connections that ended are reaped here, so a long run's reconnects do not pile up.
    for (auto it = m_connections.begin(); it != m_connections.end();) {
      if ((*it)->done.load()) {
        (*it)->thread.join();
        ::close((*it)->fd);
        it = m_connections.erase(it);
      } else {
        ++it;
      }
    }
    if (m_connections.size() >= kMaxConnections) {
      ::close(fd);
      continue;
    }
    auto connection = std::make_unique<Connection>();
    connection->fd = fd;
    Connection& c = *connection;
    m_connections.push_back(std::move(connection));
    c.thread = std::thread([this, &c] { serve(c); });
  }
}

void StoreServer::serve(Connection& connection) {
  std::string request;
  while (!m_stopping.load() &&
         wire::readMessage(connection.fd, request, std::nullopt) == wire::ReadResult::Ok) {
    const std::string out = answer(request);
    if (out.empty()) {
      (void)wire::sendAll(connection.fd, reply(Status::Refused));
      break;
    }
    if (!wire::sendAll(connection.fd, out)) break;
  }
  ::shutdown(connection.fd, SHUT_RDWR);
  connection.done.store(true);
}

std::string StoreServer::answer(const std::string& request) {
  const auto message = wire::decode(request);
  if (!message) return {};
  const auto& f = message->fields;
  const auto deadlineOf = [](const std::string& field) -> std::optional<Clock::time_point> {
    const auto ms = wire::int64Of(field);
    if (!ms || *ms < 0) return std::nullopt;
    return Clock::now() + std::chrono::milliseconds(std::min<std::int64_t>(*ms, 1LL << 40));
  };
  std::unique_lock<std::mutex> lock(m_mutex);
  const auto present = [&](auto first, auto last) {
    for (auto k = first; k != last; ++k)
      if (m_values.count(*k) == 0) return false;
    return true;
  };
  // Blocks until the keys exist (true), the deadline passes or the server stops (false).
  const auto waitFor = [&](auto first, auto last, Clock::time_point deadline) {
    return m_changed.wait_until(lock, deadline, [&] {
      return m_stopping.load() || present(first, last);
    }) && !m_stopping.load();
  };
  switch (static_cast<Op>(message->code)) {
    case Op::Set:
      if (f.size() != 2) return {};
      m_values[f[0]] = f[1];
      m_changed.notify_all();
      return reply(Status::Ok);
    case Op::Get: {
      if (f.size() != 2) return {};
      const auto deadline = deadlineOf(f[1]);
      if (!deadline) return {};
      if (!waitFor(f.begin(), f.begin() + 1, *deadline)) return reply(Status::TimedOut);
      return reply(Status::Ok, {m_values[f[0]]});
    }
    case Op::Add: {
      if (f.size() != 2 || !wire::int64Of(f[1])) return {};
      auto& value = m_values[f[0]];
      const std::int64_t sum = asInteger(value) + *wire::int64Of(f[1]);
      value = std::to_string(sum);
      m_changed.notify_all();
      return reply(Status::Ok, {wire::int64Field(sum)});
    }
    case Op::CompareSet: {
      // c10d's semantics: a missing key is set only when `expected` is empty; the reply is the
      // value the key holds afterwards (or `expected`, for a missing key left unset).
      if (f.size() != 3) return {};
      const auto it = m_values.find(f[0]);
      if (it == m_values.end()) {
        if (!f[1].empty()) return reply(Status::Ok, {f[1]});
        m_values[f[0]] = f[2];
        m_changed.notify_all();
        return reply(Status::Ok, {f[2]});
      }
      if (it->second == f[1]) {
        it->second = f[2];
        m_changed.notify_all();
      }
      return reply(Status::Ok, {it->second});
    }
    case Op::Delete:
      if (f.size() != 1) return {};
      return reply(Status::Ok, {wire::int64Field(m_values.erase(f[0]) > 0 ? 1 : 0)});
    case Op::Check:
      return reply(Status::Ok, {wire::int64Field(present(f.begin(), f.end()) ? 1 : 0)});
    case Op::Count:
      return reply(Status::Ok, {wire::int64Field(static_cast<std::int64_t>(m_values.size()))});
    case Op::Wait: {
      if (f.empty()) return {};
      const auto deadline = deadlineOf(f[0]);
      if (!deadline) return {};
      return reply(waitFor(f.begin() + 1, f.end(), *deadline) ? Status::Ok : Status::TimedOut);
    }
  }
  return {};
}

}  // namespace tb::trainer::distributed
