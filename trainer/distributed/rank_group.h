#pragma once
// RankGroup: this process's membership in a distributed run, on PyTorch's own c10d: a store
// (Tokenbench's own, served by the launcher of node 0 or by rank 0; torchrun's TCPStore; a
// FileStore under the trainer's own launcher on one node), a ProcessGroupGloo or ProcessGroupNCCL
// (CUDA builds, one GPU per rank), heartbeats, and collectives whose failures become errors that
// name the rank at fault. Collectives take tensors on any device: those not on the backend's (the
// CPU for Gloo, the rank's GPU for NCCL) are staged there and back.

#include "core/run_config.h"
#include "trainer/distributed/launch_environment.h"
#include "trainer/torch_compat_c10d.h"

#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tb::trainer::distributed {

class StoreClient;
class StoreServer;

/// A reduction in flight (RankGroup::allReduceSumAsync, reduceScatterSumAsync): one or more
/// c10d works, and what to do once they are done.
class PendingReduce {
 public:
  PendingReduce() = default;
  explicit PendingReduce(c10::intrusive_ptr<c10d::Work> work, const char* what = "all-reduce");
  ~PendingReduce();
  PendingReduce(PendingReduce&&) noexcept;
  PendingReduce& operator=(PendingReduce&&) noexcept;
  bool valid() const;

 private:
  friend class RankGroup;
  std::vector<c10::intrusive_ptr<c10d::Work>> m_works;
  std::function<void()> m_then;  ///< runs after the last work, before wait() returns
  const char* m_what = "all-reduce";
};

class RankGroup {
 public:
  /// Connects to the store and builds the process group for ranks training on `device`
  /// (distributed.backend "auto": NCCL on CUDA when the build has it, else Gloo); blocks until
  /// every rank has joined or `config.timeout_s` passes. Throws UserError ("rank_group_failed")
  /// naming the store address and what went wrong; ("backend_unsupported") for nccl on the CPU or
  /// without NCCL; ("device_unavailable") when NCCL ranks of one node share a GPU.
  RankGroup(const LaunchInfo& launch, const core::DistributedConfig& config,
            const torch::Device& device = torch::kCPU);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int rank() const { return m_launch.rank; }
  int worldSize() const { return m_launch.world_size; }
  const LaunchInfo& launch() const { return m_launch; }
  /// "gloo" or "nccl".
  const std::string& backend() const { return m_backend; }
  /// Where the backend's tensors live: the CPU (Gloo) or this rank's GPU (NCCL).
  const torch::Device& commDevice() const { return m_comm_device; }

  /// In-place sum over ranks of each tensor (contiguous, same shapes on every rank).
  void allReduceSum(std::vector<torch::Tensor>& tensors);
  /// In-place mean over ranks.
  void allReduceMean(std::vector<torch::Tensor>& tensors);
  /// Starts an in-place sum of one contiguous tensor on commDevice(); wait() completes it.
  PendingReduce allReduceSumAsync(torch::Tensor& tensor);
  void wait(PendingReduce& pending);
  /// Copies `root`'s tensors into every rank's.
  void broadcast(std::vector<torch::Tensor>& tensors, int root);
  /// All-gather of equal shares (ZeRO-2/3 parameters): `output` `[N x share]` receives rank r's
  /// `input` `[share]` at `[r x share, (r + 1) x share)`, on every rank. 1-D tensors of one dtype.
  /// NCCL gathers into `output` in one call; Gloo through its list all-gather.
  void allGather(torch::Tensor& output, const torch::Tensor& input);
  /// Starts the sum over ranks of `input` `[N x share]` (contiguous, on commDevice()) whose share
  /// r belongs to rank r: a reduce-scatter on NCCL; on Gloo, which has none, one reduce per share
  /// to the rank that owns it. When wait() returns, `output` `[share]` (on commDevice()) holds
  /// this rank's share of the sum; `input` is scratch until then.
  PendingReduce reduceScatterSumAsync(torch::Tensor& input, torch::Tensor& output);
  /// Point to point (ZeRO-1 gathers): `tensor` must have the receiver's expected shape.
  void send(torch::Tensor& tensor, int to);
  void receive(torch::Tensor& tensor, int from);

  /// Rank 0 calls arrive(tag) after work only it does (validation, checkpoints); the others call
  /// awaitRankZero(tag), which waits as long as rank 0 keeps its heartbeat, and fails within
  /// timeout_s once it stops (never a hang, never a spurious timeout during a long validation).
  void arrive(const std::string& tag);
  void awaitRankZero(const std::string& tag);

  /// Leaves a note in the store that this rank is failing and why, so the others can name it.
  void reportFailure(const std::string& what) noexcept;

  /// A sentence naming the rank(s) at fault, from failure notes and stale heartbeats, e.g.
  /// "rank 1 failed: data.path ... is not a folder" or "rank 1 stopped responding (no heartbeat
  /// for 12.3 s)"; empty when nothing is known.
  std::string diagnose() noexcept;

 private:
  template <class F>
  void guarded(const char* what, F&& f);
  [[noreturn]] void fail(const char* what, const std::string& detail);
  void checkDistinctGpus(const torch::Device& device);
  /// Runs `op` on copies of `tensors` on commDevice() (the tensors themselves when they are there,
  /// contiguous and of a dtype the backend has); with `copy_back` the results are copied into
  /// `tensors`.
  template <class Op>
  void onCommDevice(std::vector<torch::Tensor>& tensors, bool copy_back, Op&& op);
  void heartbeatLoop();
  void beat();
  std::filesystem::path heartbeatFile(int rank) const;
  double heartbeatAgeS(int rank) noexcept;

  LaunchInfo m_launch;
  std::chrono::milliseconds m_timeout;
  std::string m_backend;
  torch::Device m_comm_device{torch::kCPU};
  c10::intrusive_ptr<c10d::Store>
      m_base_store;                         ///< this rank's store connection (or server, or file)
  c10::intrusive_ptr<c10d::Store> m_store;  ///< prefixed view used for our keys
  c10::intrusive_ptr<c10d::Store>
      m_heartbeat_store;                      ///< a connection of its own; null on a FileStore
  StoreClient* m_heartbeat_client = nullptr;  ///< under m_heartbeat_store, when it is ours
  std::unique_ptr<StoreServer> m_served;      ///< the store, when this rank serves it
  /// The store stopped answering (a beat or a request waited in vain): the run is cut off from
  /// node 0, and asking the store again would only wait again.
  std::atomic<bool> m_store_silent{false};
  c10::intrusive_ptr<compat::CollectiveBackend> m_group;
  std::int64_t m_sync_count = 0;
  std::atomic<bool> m_stop_heartbeat{false};
  std::thread m_heartbeat;
};

/// The mean over ranks of `local` (any shape, the same on every rank), differentiable. Backward
/// passes the gradient through unchanged: every rank's loss uses the same global mean, and the
/// gradients reaching the parameters are averaged over ranks like all others, which gives the
/// gradient of the global batch.
torch::Tensor averageOverRanks(const torch::Tensor& local, RankGroup& group);

}  // namespace tb::trainer::distributed
