// Tokenbench's rendezvous store (trainer/distributed/store_*): the c10d operations the process
// groups use, listening on the given address only, and a store that stops answering named within
// seconds instead of waiting out a second timeout.
#include "trainer/distributed/store_client.h"
#include "trainer/distributed/store_server.h"
#include "trainer/user_error.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace tb::trainer::distributed {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A TCP connection attempt to host:port; 0 or the errno.
int tryConnect(const std::string& host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 ? 0 : errno;
  ::close(fd);
  return rc;
}

// Local addresses (as /proc/net/tcp writes them, e.g. "0200007F:7361") of listening sockets.
std::vector<std::string> listeningOnPort(int port) {
  std::vector<std::string> found;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      char suffix[8];
      std::snprintf(suffix, sizeof suffix, ":%04X", port);
      if (state == "0A" && local.size() > 5 && local.substr(local.size() - 5) == suffix)
        found.push_back(local);
    }
  }
  return found;
}

TEST(RendezvousStore, ServesTheC10dOperations) {
  StoreServer server("127.0.0.1", 0);
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(server.listeningOn(), "127.0.0.1:" + std::to_string(server.port()));
  StoreClient a("127.0.0.1", server.port(), 10s);
  StoreClient b("127.0.0.1", server.port(), 10s);

  a.set("k", bytes("v1"));
  EXPECT_EQ(text(b.get("k")), "v1");
  EXPECT_TRUE(b.check({"k"}));
  EXPECT_FALSE(b.check({"k", "missing"}));
  EXPECT_EQ(a.add("n", 5), 5);
  EXPECT_EQ(b.add("n", -2), 3);
  EXPECT_EQ(text(a.get("n")), "3");  // counters read as decimal text, as c10d's TCPStore has them
  // compareSet, c10d's way: a missing key is set only when `expected` is empty.
  EXPECT_EQ(text(a.compareSet("c", bytes("x"), bytes("y"))), "x");
  EXPECT_FALSE(a.check({"c"}));
  EXPECT_EQ(text(a.compareSet("c", {}, bytes("y"))), "y");
  EXPECT_EQ(text(a.compareSet("c", bytes("nope"), bytes("z"))), "y");
  EXPECT_EQ(text(a.compareSet("c", bytes("y"), bytes("z"))), "z");
  EXPECT_EQ(a.getNumKeys(), 3);
  EXPECT_TRUE(a.deleteKey("c"));
  EXPECT_FALSE(a.deleteKey("c"));
  EXPECT_EQ(a.getNumKeys(), 2);

  // get and wait block until another client sets the key.
  std::thread later([&] {
    std::this_thread::sleep_for(200ms);
    StoreClient c("127.0.0.1", server.port(), 10s);
    c.set("late", bytes("here"));
  });
  const auto start = Clock::now();
  EXPECT_EQ(text(b.get("late")), "here");
  EXPECT_GE(secondsSince(start), 0.15);
  later.join();
  a.wait({"late", "k"});

  // A key that never comes: a timeout after the given time, not an unreachable store.
  const auto waited = Clock::now();
  try {
    a.wait({"never"}, 300ms);
    ADD_FAILURE() << "wait for a missing key returned";
  } catch (const StoreUnreachable& e) {
    ADD_FAILURE() << "a timeout reported as an unreachable store: " << e.what();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("key never"), std::string::npos) << e.what();
  }
  EXPECT_GE(secondsSince(waited), 0.25);
  EXPECT_LT(secondsSince(waited), 3.0);
  // The connection still works after it.
  EXPECT_EQ(text(a.get("k")), "v1");
  // A clone is a connection of its own to the same table.
  auto clone = a.clone();
  EXPECT_EQ(text(clone->get("k")), "v1");
}

// The store of a run on several nodes listened on every interface (c10d's TCPStore in LibTorch
// 1.13 binds the wildcard address). 127.0.0.2 and 127.0.0.3 are both this machine: only the
// address asked for may answer.
TEST(RendezvousStore, ListensOnItsAddressOnly) {
  StoreServer server("127.0.0.2", 0);
  EXPECT_EQ(server.listeningOn(), "127.0.0.2:" + std::to_string(server.port()));
  EXPECT_EQ(tryConnect("127.0.0.2", server.port()), 0);
  EXPECT_EQ(tryConnect("127.0.0.3", server.port()), ECONNREFUSED);
  const auto listening = listeningOnPort(server.port());
  ASSERT_EQ(listening.size(), 1u);
  char expected[32];
  std::snprintf(expected, sizeof expected, "0200007F:%04X", server.port());
  EXPECT_EQ(listening[0], expected);
}

TEST(RendezvousStore, AnAddressOfAnotherMachineIsRefusedNamingIt) {
  try {
    StoreServer server("192.0.2.1", 0);  // TEST-NET-1: never an address of this machine
    ADD_FAILURE() << "listened on " << server.listeningOn();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), "rank_group_failed");
    EXPECT_NE(std::string(e.what()).find("192.0.2.1 is not an address of this machine"),
              std::string::npos)
        << e.what();
  }
  // A port already taken is named too.
  StoreServer first("127.0.0.1", 0);
  try {
    StoreServer second("127.0.0.1", first.port());
    ADD_FAILURE() << "two stores on one port";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(first.port())), std::string::npos);
    EXPECT_NE(e.hint().find("master_port"), std::string::npos) << e.hint();
  }
}

// A listening socket nobody accepts from: connections complete (the kernel takes them into the
// backlog) but no request is ever answered, as when the link to node 0 is cut.
class SilentPeer {
 public:
  SilentPeer() {
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(m_fd, 8);
    socklen_t size = sizeof addr;
    ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&addr), &size);
    m_port = ntohs(addr.sin_port);
  }
  ~SilentPeer() { ::close(m_fd); }
  int port() const { return m_port; }

 private:
  int m_fd = -1;
  int m_port = 0;
};

TEST(RendezvousStore, AStoreThatStopsAnsweringIsNamedWithinSecondsNotAfterTheTimeout) {
  SilentPeer silent;
  StoreClient client("127.0.0.1", silent.port(), 60s);
  const auto start = Clock::now();
  try {
    client.check({"fail/1"});
    ADD_FAILURE() << "a silent store answered";
  } catch (const StoreUnreachable& e) {
    EXPECT_FALSE(e.gone());
    EXPECT_NE(std::string(e.what()).find("has not answered for 5 s"), std::string::npos)
        << e.what();
  }
  const double took = secondsSince(start);
  EXPECT_GE(took, 4.5);
  EXPECT_LT(took, 8.0) << "waited for the store's 60 s timeout";

  // A beat blocked on it ends at once when its thread is told to stop.
  std::thread beat([&] {
    try {
      client.set("hb/1", bytes("1"));
    } catch (const StoreUnreachable&) {
    }
  });
  std::this_thread::sleep_for(300ms);
  const auto interrupted = Clock::now();
  client.interrupt();
  beat.join();
  EXPECT_LT(secondsSince(interrupted), 1.5);
}

TEST(RendezvousStore, AStoreWhoseServerExitedIsNamedGone) {
  auto server = std::make_unique<StoreServer>("127.0.0.1", 0);
  const int port = server->port();
  StoreClient client("127.0.0.1", port, 60s);
  client.set("k", bytes("v"));
  server.reset();
  const auto start = Clock::now();
  try {
    client.get("k");
    ADD_FAILURE() << "a store that exited answered";
  } catch (const StoreUnreachable& e) {
    EXPECT_TRUE(e.gone()) << e.what();
  }
  EXPECT_LT(secondsSince(start), 6.0);
  // Nobody listening at all: refused connections are retried for the timeout, then named.
  try {
    StoreClient late("127.0.0.1", port, 500ms);
    ADD_FAILURE() << "connected to nothing";
  } catch (const StoreUnreachable& e) {
    EXPECT_TRUE(e.gone());
    EXPECT_NE(std::string(e.what()).find("nothing serves the store there"), std::string::npos)
        << e.what();
  }
}

// A stranger's bytes (a length of 4 GiB, garbage) end that connection only.
TEST(RendezvousStore, GarbageEndsItsConnectionOnly) {
  StoreServer server("127.0.0.1", 0);
  StoreClient client("127.0.0.1", server.port(), 10s);
  client.set("k", bytes("v"));
  for (const std::string& junk :
       {std::string("\xff\xff\xff\xff", 4), std::string("\x02\0\0\0\x01\x07", 6),
        std::string("\x05\0\0\0\x09\x01\0\0\0", 9)}) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(server.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(junk.size()));
    ::shutdown(fd, SHUT_WR);
    char buf[64];
    while (::recv(fd, buf, sizeof buf, 0) > 0) {
    }
    ::close(fd);
  }
  EXPECT_EQ(text(client.get("k")), "v");
}

}  // namespace
}  // namespace tb::trainer::distributed
