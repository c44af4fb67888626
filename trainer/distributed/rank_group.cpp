#include "trainer/distributed/rank_group.h"

#include "core/atomic_file.h"

#include "trainer/distributed/store_client.h"
#include "trainer/distributed/store_server.h"
#include "trainer/training_device.h"
#include "trainer/user_error.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

namespace tb::trainer::distributed {
namespace {

using Clock = std::chrono::system_clock;

std::int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

std::string firstLine(const std::string& message) {
  const auto end = message.find('\n');
  return end == std::string::npos ? message : message.substr(0, end);
}

// Where the ranks meet, for messages: the store file or host:port.
std::string storeAddress(const LaunchInfo& launch) {
  return launch.store_file.empty() ? launch.master_addr + ":" + std::to_string(launch.master_port)
                                   : launch.store_file;
}

// A rank's connection to the store: the FileStore of a one-node run, the TCPStore of torchrun's
// agent, or Tokenbench's own store (served by node 0's launcher or by rank 0).
c10::intrusive_ptr<c10d::Store> connectStore(const LaunchInfo& launch,
                                             std::chrono::milliseconds timeout) {
  if (!launch.store_file.empty()) {
    // One node: a file in a folder only this user may enter, so nothing listens on the network.
    // No worker count: the launcher removes the file, not the last rank to leave.
    return compat::makeFileStore(launch.store_file, timeout);
  }
  if (launch.launcher == "torchrun" && launch.store_served_by_launcher) {
    return compat::makeTcpStoreClient(launch.master_addr, launch.master_port, timeout);
  }
  return c10::make_intrusive<StoreClient>(launch.master_addr, launch.master_port, timeout);
}

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

constexpr double kHeartbeatPeriodS = 1.0;

}  // namespace

PendingReduce::PendingReduce(c10::intrusive_ptr<c10d::Work> work, const char* what) : m_what(what) {
  m_works.push_back(std::move(work));
}
PendingReduce::~PendingReduce() = default;
PendingReduce::PendingReduce(PendingReduce&&) noexcept = default;
PendingReduce& PendingReduce::operator=(PendingReduce&&) noexcept = default;
bool PendingReduce::valid() const { return !m_works.empty(); }

RankGroup::RankGroup(const LaunchInfo& launch, const core::DistributedConfig& config,
                     const torch::Device& device)
    : m_launch(launch),
      m_timeout(std::chrono::seconds(config.timeout_s)),
      m_backend(resolveBackend(config, device)) {
  if (m_backend == "nccl") m_comm_device = device;
  const std::string where = storeAddress(launch);
  try {
    if (launch.rank == 0 && !launch.store_served_by_launcher) {
      m_served = std::make_unique<StoreServer>(launch.master_addr, launch.master_port);
      std::cerr << "[tokenbench-trainer] rank 0 serves the rendezvous store on "
                << m_served->listeningOn() << std::endl;
    }
    // torchrun restarts workers against the same agent store: a restart's keys must not meet
    // those of the attempt before it.
    const char* restart = std::getenv("TORCHELASTIC_RESTART_COUNT");
    const std::string prefix = std::string("tokenbench/") + (restart != nullptr ? restart : "0");
    m_base_store = connectStore(launch, m_timeout);
    m_store = c10::make_intrusive<c10d::PrefixStore>(prefix, m_base_store);
    if (launch.store_file.empty()) {
      auto heartbeat = connectStore(launch, m_timeout);
      m_heartbeat_client = dynamic_cast<StoreClient*>(heartbeat.get());
      m_heartbeat_store = c10::make_intrusive<c10d::PrefixStore>(prefix, std::move(heartbeat));
    }
    beat();

    auto pg_store = c10::make_intrusive<c10d::PrefixStore>(prefix + "/pg", m_base_store);
    if (m_backend == "nccl") {
      checkDistinctGpus(device);
      compat::setCurrentDevice(device);
      m_group = compat::makeNcclBackend(pg_store, rank(), worldSize(), m_timeout);
    } else {
      compat::GlooTransport transport;
      const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
      if (ifname != nullptr && *ifname != '\0') {
        transport.interface = std::string(ifname).substr(0, std::string(ifname).find(','));
      } else if (!launch.store_file.empty() || namesLoopback(launch.master_addr)) {
        // One node: the ranks' own connections stay on loopback too.
        transport.hostname = "127.0.0.1";
      }
      m_group = compat::makeGlooBackend(pg_store, rank(), worldSize(), m_timeout, transport, 2);
    }
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    throw UserError("rank_group_failed",
                    "rank " + std::to_string(rank()) + " could not join the c10d group at " +
                        where + ": " + firstLine(e.what()),
                    "check distributed.master_addr / master_port (or MASTER_ADDR / MASTER_PORT), "
                    "that every rank "
                    "started, and GLOO_SOCKET_IFNAME on multi-homed nodes");
  }
  m_heartbeat = std::thread([this] { heartbeatLoop(); });
}

// NCCL needs one GPU per rank; two ranks of one node on the same GPU fail deep inside NCCL with
// a message that names neither. Every rank publishes its host and GPU (by PCI bus id: under
// Slurm each task may see its own GPU as cuda:0), and reads the others'.
void RankGroup::checkDistinctGpus(const torch::Device& device) {
  std::string gpu = device.str();
  try {
    const std::string bus = compat::cudaDeviceInfo(device.index()).bus_id;
    if (!bus.empty()) gpu += " (PCI " + bus + ")";
  } catch (const std::exception&) {
  }
  const std::string mine = hostName() + " " + gpu;
  m_store->set("gpu/" + std::to_string(rank()), bytes(mine));
  for (int r = 0; r < worldSize(); ++r) {
    if (r == rank()) continue;
    const std::string key = "gpu/" + std::to_string(r);
    m_store->wait({key}, m_timeout);
    if (text(m_store->get(key)) == mine) {
      throw UserError(
          "device_unavailable",
          "ranks " + std::to_string(std::min(r, rank())) + " and " +
              std::to_string(std::max(r, rank())) + " both train on " + mine +
              ", and NCCL needs one GPU per rank (train.device, "
              "distributed.gpu_ids, distributed.backend \"nccl\")",
          "give each local rank its own GPU (train.device \"cuda\", distributed.gpu_ids), or share "
          "one GPU over Gloo (distributed.backend \"gloo\")");
    }
  }
}

RankGroup::~RankGroup() {
  m_stop_heartbeat.store(true);
  // A beat waiting on a store that does not answer must not hold up the exit.
  if (m_heartbeat_client != nullptr) m_heartbeat_client->interrupt();
  if (m_heartbeat.joinable()) m_heartbeat.join();
  // A FileStore's destructor appends to its file, and terminates the process when it cannot (a
  // full disk). The launcher removes the file, so the store is left undestroyed at exit.
  if (!m_launch.store_file.empty()) (void)m_base_store.release();
}

// Heartbeats of a one-node run are files beside the store file, replaced at every beat: a
// FileStore appends every write and never compacts, so a key set every second would grow it
// by some 4 MB a day per rank.
std::filesystem::path RankGroup::heartbeatFile(int r) const {
  return std::filesystem::path(m_launch.store_file).parent_path() / ("hb_" + std::to_string(r));
}

void RankGroup::beat() {
  const std::string now = std::to_string(nowMs());
  if (m_launch.store_file.empty()) {
    m_heartbeat_store->set("hb/" + std::to_string(rank()), bytes(now));
    return;
  }
  const std::filesystem::path file = heartbeatFile(rank());
  core::writeFileAtomically(file, now, core::Durability::Visible);  // read by the other ranks
}

void RankGroup::heartbeatLoop() {
  while (!m_stop_heartbeat.load()) {
    try {
      beat();
      m_store_silent.store(false);
    } catch (const StoreUnreachable& e) {
      // The next collective or store request reports it, naming node 0 at once.
      if (!e.gone()) m_store_silent.store(true);
    } catch (const std::exception&) {
      // The store is gone (its host died); the next collective reports it.
    }
    for (int i = 0; i < 10 && !m_stop_heartbeat.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::duration<double>(kHeartbeatPeriodS / 10));
    }
  }
}

double RankGroup::heartbeatAgeS(int r) noexcept {
  try {
    if (!m_launch.store_file.empty()) {
      std::ifstream in(heartbeatFile(r));
      std::int64_t ms = 0;
      if (!(in >> ms)) return -1;
      return static_cast<double>(nowMs() - ms) / 1000.0;
    }
    const std::string key = "hb/" + std::to_string(r);
    if (!m_store->check({key})) return -1;
    return static_cast<double>(nowMs() - std::stoll(text(m_store->get(key)))) / 1000.0;
  } catch (const std::exception&) {
    return -1;
  }
}

void RankGroup::reportFailure(const std::string& what) noexcept {
  if (m_store_silent.load()) return;  // a note nobody can read, after a wait for no answer
  try {
    m_store->set("fail/" + std::to_string(rank()), bytes(firstLine(what).substr(0, 500)));
  } catch (const std::exception&) {
  }
}

std::string RankGroup::diagnose() noexcept {
  const auto unreachable = [&] {
    return "cannot reach node 0 at " + storeAddress(m_launch) +
           ": its rendezvous store does not answer (the network link or node 0 is down)";
  };
  if (m_store_silent.load()) return unreachable();
  std::ostringstream out;
  try {
    for (int r = 0; r < worldSize(); ++r) {
      if (r == rank()) continue;
      const std::string key = "fail/" + std::to_string(r);
      if (m_store->check({key})) {
        out << (out.tellp() > 0 ? "; " : "") << "rank " << r
            << " failed: " << text(m_store->get(key));
      }
    }
    if (out.tellp() > 0) return out.str();
    for (int r = 0; r < worldSize(); ++r) {
      if (r == rank()) continue;
      const double age = heartbeatAgeS(r);
      if (age > 3 * kHeartbeatPeriodS) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f", age);
        out << (out.tellp() > 0 ? "; " : "") << "rank " << r
            << " stopped responding (no heartbeat for " << buf << " s)";
      }
    }
  } catch (const StoreUnreachable& e) {
    if (!e.gone()) {
      m_store_silent.store(true);
      return unreachable();
    }
    return "the rendezvous store at " + storeAddress(m_launch) +
           " is gone (the launcher or rank 0 that served it has exited)";
  } catch (const std::exception&) {
    return "the c10d store at " + storeAddress(m_launch) +
           " is unreachable (the rank or launcher that served it is gone)";
  }
  return out.str();
}

void RankGroup::fail(const char* what, const std::string& detail) {
  // A failing peer leaves a note at once; a dead one is known by its heartbeat going stale, which
  // takes a few heartbeat periods.
  std::string who;
  const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(4 * kHeartbeatPeriodS));
  while ((who = diagnose()).empty() && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (who.empty()) who = "a peer failed or timed out";
  throw UserError("rank_failed",
                  "rank " + std::to_string(rank()) + ": " + what + " failed: " + who + " (" +
                      firstLine(detail) + ")",
                  "the run resumes from its last checkpoint with --resume");
}

template <class F>
void RankGroup::guarded(const char* what, F&& f) {
  try {
    f();
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    fail(what, e.what());
  }
}

template <class Op>
void RankGroup::onCommDevice(std::vector<torch::Tensor>& tensors, bool copy_back, Op&& op) {
  for (auto& t : tensors) {
    // Gloo (LibTorch 1.13) has no bfloat16: such tensors (statistics computed under bf16
    // autocast) travel as float32, which holds every bfloat16 value exactly.
    const auto dtype = m_backend == "gloo" && t.scalar_type() == torch::kBFloat16 ? torch::kFloat
                                                                                  : t.scalar_type();
    const bool in_place =
        t.device() == m_comm_device && t.is_contiguous() && dtype == t.scalar_type();
    std::vector<at::Tensor> one{
        in_place ? t
                 : t.to(m_comm_device, dtype, /*non_blocking=*/false, /*copy=*/true).contiguous()};
    op(one);
    if (copy_back && !in_place) t.copy_(one[0]);
  }
}

void RankGroup::allReduceSum(std::vector<torch::Tensor>& tensors) {
  guarded("all-reduce", [&] {
    onCommDevice(tensors, true,
                 [&](std::vector<at::Tensor>& one) { m_group->allreduce(one)->wait(); });
  });
}

void RankGroup::allReduceMean(std::vector<torch::Tensor>& tensors) {
  allReduceSum(tensors);
  for (auto& t : tensors) t.div_(worldSize());
}

PendingReduce RankGroup::allReduceSumAsync(torch::Tensor& tensor) {
  TORCH_CHECK(tensor.device() == m_comm_device && tensor.is_contiguous(),
              "allReduceSumAsync: the tensor must be contiguous on ", m_comm_device.str());
  PendingReduce pending;
  guarded("all-reduce", [&] {
    std::vector<at::Tensor> one{tensor};
    pending = PendingReduce(m_group->allreduce(one), "all-reduce");
  });
  return pending;
}

void RankGroup::wait(PendingReduce& pending) {
  if (!pending.valid()) return;
  guarded(pending.m_what, [&] {
    for (auto& work : pending.m_works) work->wait();
  });
  pending.m_works.clear();
  if (pending.m_then) std::exchange(pending.m_then, nullptr)();
}

namespace {

// Fault injection for the tests (TB_FAULT_KILL_IN_GATHER="R:N": rank R kills itself with SIGKILL
// as it enters its N-th all-gather, leaving the other ranks inside that collective).
void killInGatherWhenAsked(int rank) {
  static const std::pair<long, long> fault = [] {
    std::pair<long, long> f{-1, 0};
    const char* text = std::getenv("TB_FAULT_KILL_IN_GATHER");
    if (text == nullptr || std::sscanf(text, "%ld:%ld", &f.first, &f.second) != 2) f = {-1, 0};
    return f;
  }();
  static long gathers = 0;
  if (fault.first == rank && ++gathers == fault.second) ::kill(::getpid(), SIGKILL);
}

}  // namespace

void RankGroup::allGather(torch::Tensor& output, const torch::Tensor& input) {
  killInGatherWhenAsked(rank());
  TORCH_CHECK(
      output.dim() == 1 && input.dim() == 1 && output.numel() == input.numel() * worldSize(),
      "allGather: expected output [", worldSize(), " x ", input.numel(), "], got ", output.sizes());
  guarded("all-gather", [&] {
    // Staged on the backend's device when the tensors live elsewhere (CUDA tensors over Gloo).
    const bool staged = output.device() != m_comm_device || !output.is_contiguous();
    at::Tensor out =
        staged ? torch::empty(output.sizes(), output.options().device(m_comm_device)) : output;
    at::Tensor in = input.to(m_comm_device).contiguous();
    if (m_backend == "nccl") {
      m_group->_allgather_base(out, in)->wait();
    } else {
      std::vector<std::vector<at::Tensor>> outs(1);
      for (int r = 0; r < worldSize(); ++r)
        outs[0].push_back(out.narrow(0, r * in.numel(), in.numel()));
      std::vector<at::Tensor> ins{in};
      m_group->allgather(outs, ins)->wait();
    }
    if (staged) output.copy_(out);
  });
}

PendingReduce RankGroup::reduceScatterSumAsync(torch::Tensor& input, torch::Tensor& output) {
  const std::int64_t share = output.numel();
  TORCH_CHECK(input.device() == m_comm_device && output.device() == m_comm_device &&
                  input.is_contiguous() && output.is_contiguous() &&
                  input.numel() == share * worldSize(),
              "reduceScatterSumAsync: expected contiguous input [", worldSize(), " x ", share,
              "] and output [", share, "] on ", m_comm_device.str());
  PendingReduce pending;
  pending.m_what = "reduce-scatter";
  guarded("reduce-scatter", [&] {
    if (m_backend == "nccl") {
      pending.m_works.push_back(m_group->_reduce_scatter_base(output, input));
      return;
    }
    for (int r = 0; r < worldSize(); ++r) {
      c10d::ReduceOptions options;
      options.rootRank = r;
      std::vector<at::Tensor> one{input.narrow(0, r * share, share)};
      pending.m_works.push_back(m_group->reduce(one, options));
    }
    // The owner's sum is left in its own share of the input.
    pending.m_then = [input, output, share, r = rank()]() mutable {
      output.copy_(input.narrow(0, r * share, share));
    };
  });
  return pending;
}

void RankGroup::broadcast(std::vector<torch::Tensor>& tensors, int root) {
  guarded("broadcast", [&] {
    c10d::BroadcastOptions options;
    options.rootRank = root;
    onCommDevice(tensors, rank() != root,
                 [&](std::vector<at::Tensor>& one) { m_group->broadcast(one, options)->wait(); });
  });
}

void RankGroup::send(torch::Tensor& tensor, int to) {
  guarded("send", [&] {
    std::vector<torch::Tensor> tensors{tensor};
    onCommDevice(tensors, false,
                 [&](std::vector<at::Tensor>& one) { m_group->send(one, to, 0)->wait(); });
  });
}

void RankGroup::receive(torch::Tensor& tensor, int from) {
  guarded("receive", [&] {
    std::vector<torch::Tensor> tensors{tensor};
    onCommDevice(tensors, true,
                 [&](std::vector<at::Tensor>& one) { m_group->recv(one, from, 0)->wait(); });
  });
}

// Every rank counts its synchronisation points, so a step reached twice (after a rollback) still
// gets a key of its own.
void RankGroup::arrive(const std::string& tag) {
  const std::string key = "sync/" + std::to_string(m_sync_count++) + "/" + tag;
  guarded("signal", [&] { m_store->set(key, bytes("1")); });
}

void RankGroup::awaitRankZero(const std::string& tag) {
  const std::string key = "sync/" + std::to_string(m_sync_count++) + "/" + tag;
  const double limit_s = static_cast<double>(m_timeout.count()) / 1000.0;
  guarded("wait for rank 0", [&] {
    while (!m_store->check({key})) {
      const double age = heartbeatAgeS(0);
      if (age > limit_s) {
        throw std::runtime_error("rank 0 sent no heartbeat for " +
                                 std::to_string(static_cast<int>(age)) + " s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

namespace {

class AverageOverRanks : public torch::autograd::Function<AverageOverRanks> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext*, const torch::Tensor& local,
                               RankGroup* group) {
    std::vector<torch::Tensor> mean{local.detach().contiguous().clone()};
    group->allReduceMean(mean);
    return mean[0];
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::variable_list grads) {
    return {grads[0], torch::Tensor()};
  }
};

}  // namespace

torch::Tensor averageOverRanks(const torch::Tensor& local, RankGroup& group) {
  return AverageOverRanks::apply(local, &group);
}

}  // namespace tb::trainer::distributed
