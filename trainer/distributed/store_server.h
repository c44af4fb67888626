#pragma once
// StoreServer: the rendezvous store of a run on several nodes (served by node 0's launcher, or
// by rank 0 under an outside launcher), a key-value table the ranks reach through StoreClient.
// It listens on distributed.master_addr only, never on every interface (c10d's TCPStore in
// LibTorch 1.13 cannot be bound to an address). Waits for keys block on the server, each
// connection in a thread of its own; requests are bounded (store_wire.h), so a stranger's
// connection cannot exhaust the server. Torch-free.

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tb::trainer::distributed {

class StoreServer {
 public:
  /// Listens on `address` (numeric, or a host name that resolves to an address of this
  /// machine) at `port` (0: the system picks a free one). A host name that resolves only to
  /// loopback here though it is not "localhost" (Debian's /etc/hosts maps the machine's own name
  /// to 127.0.1.1) cannot be what the other nodes reach: then it listens on every interface and
  /// listeningOn() says so. Throws UserError ("rank_group_failed") naming the address when it
  /// is not one of this machine's, or the port is taken.
  StoreServer(const std::string& address, int port);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  int port() const { return m_port; }
  /// Where it listens, for the log: "10.77.0.1:29631", or "every interface, port 29631 (...)".
  const std::string& listeningOn() const { return m_listening_on; }

 private:
  struct Connection;
  void acceptLoop();
  void serve(Connection& connection);
  /// The reply to one request body; empty when the request is malformed.
  std::string answer(const std::string& request);

  int m_listen_fd = -1;
  int m_wake[2] = {-1, -1};  ///< written on destruction to end the accept loop
  int m_port = 0;
  std::string m_listening_on;
  std::atomic<bool> m_stopping{false};

  std::mutex m_mutex;  ///< guards m_values and m_connections
  std::condition_variable m_changed;
  std::map<std::string, std::string> m_values;
  std::vector<std::unique_ptr<Connection>> m_connections;
  std::thread m_acceptor;
};

}  // namespace tb::trainer::distributed
