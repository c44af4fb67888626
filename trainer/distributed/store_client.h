#pragma once
// StoreClient: a rank's connection to the rendezvous store (StoreServer), as the c10d::Store
// that ProcessGroupGloo, ProcessGroupNCCL and PrefixStore take. Unlike c10d's TCPStore client,
// every request waits for its answer at most kReplyTimeout beyond what it waits for by design (a
// get or wait, up to the store's timeout), and says which of the two went wrong: a node whose
// link to node 0 is cut learns it in seconds (StoreUnreachable), not after a second timeout.

#include "trainer/distributed/store_wire.h"
#include "trainer/torch_compat_c10d.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace tb::trainer::distributed {

/// The store did not answer: gone() when its end refused or closed the connection (the process
/// that served it exited), else it stayed silent (the link or its machine is down).
class StoreUnreachable : public std::runtime_error {
 public:
  StoreUnreachable(const std::string& what, bool gone) : std::runtime_error(what), m_gone(gone) {}
  bool gone() const { return m_gone; }

 private:
  bool m_gone;
};

class StoreClient : public c10d::Store {
 public:
  /// How long an answer may take beyond the request's own waiting.
  static constexpr std::chrono::milliseconds kReplyTimeout{5000};

  /// Connects to host:port, retrying while the connection is refused (node 0 may start later)
  /// for up to `timeout`, which also bounds every get and wait.
  StoreClient(std::string host, int port, std::chrono::milliseconds timeout);
  ~StoreClient() override;

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                  const std::vector<uint8_t>& desired) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool deleteKey(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t getNumKeys() override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  /// A connection of its own to the same store. LibTorch 2.x has it pure virtual in c10d::Store
  /// (since 2.6), older ones not at all: hence no `override`.
  c10::intrusive_ptr<c10d::Store> clone();

  /// "host:port".
  const std::string& address() const { return m_address; }
  /// Ends the request in progress on another thread (it throws StoreUnreachable) and every later
  /// one: for a thread that must stop now rather than wait for an answer that may not come.
  void interrupt();

 private:
  /// Sends `request` and returns the reply's fields; throws StoreUnreachable, or
  /// std::runtime_error when a get or wait timed out.
  std::vector<std::string> call(const wire::Message& request, std::chrono::milliseconds waits_for,
                                const std::string& what);
  void connect(wire::Clock::time_point deadline);
  void disconnect();

  std::string m_host;
  int m_port;
  std::string m_address;
  std::mutex m_mutex;  ///< one request at a time on the connection
  std::atomic<int> m_fd{-1};
  std::atomic<bool> m_interrupted{false};
};

}  // namespace tb::trainer::distributed
