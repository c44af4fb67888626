#pragma once
// GradientReducer: data-parallel gradient averaging (what DistributedDataParallel does in
// Python, which LibTorch's C++ API lacks). Parameters are grouped into buckets of about
// distributed.bucket_mb, in reverse registration order (the order backward produces their
// gradients); a post-hook on each parameter's gradient accumulator starts a bucket's all-reduce
// as soon as its last gradient is final, so communication overlaps the rest of backward.

#include "trainer/distributed/rank_group.h"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace torch::autograd {
struct Node;
}

namespace tb::trainer::distributed {

/// Calls `ready(k)` each time backward has accumulated the gradient of `params[k]` (a post-hook
/// on its gradient accumulator, from whichever thread runs backward). Returns the accumulators,
/// which hold the hooks: keep them alive. LibTorch cannot remove the hooks again.
std::vector<std::shared_ptr<torch::autograd::Node>> onGradientsAccumulated(
    const std::vector<torch::Tensor>& params, const std::function<void(std::size_t)>& ready);

/// Gradient buckets: indices into `params` in reverse order (the order backward produces their
/// gradients), cut where a bucket would exceed `bucket_mb` MiB or change dtype. A bucket_mb
/// below the smallest parameter's size puts every parameter in a bucket of its own.
std::vector<std::vector<std::size_t>> gradientBuckets(const std::vector<torch::Tensor>& params,
                                                      double bucket_mb);

class GradientReducer {
 public:
  /// `params`: the module's parameters (those without requires_grad are ignored). A bucket_mb
  /// below the smallest parameter's size puts every parameter in a bucket of its own (one
  /// all-reduce per parameter).
  GradientReducer(RankGroup& group, const std::vector<torch::Tensor>& params, double bucket_mb);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  /// Arms the hooks for the next backward pass (the last micro-step of an optimiser step:
  /// accumulation micro-steps before it communicate nothing).
  void arm();
  /// After that backward: starts the buckets whose gradients never became ready (unused
  /// parameters count as zero), waits for every all-reduce and writes the mean over ranks into
  /// each parameter's .grad. Disarms.
  void finish();

  std::size_t bucketCount() const { return m_buckets.size(); }
  /// Seconds spent in the last finish(): waiting for all-reduces plus copies out.
  double lastFinishS() const { return m_last_finish_s; }
  /// Seconds spent starting all-reduces (copies in) during the last armed backward and finish().
  double lastLaunchS() const { return m_last_launch_s; }

 private:
  struct Bucket {
    std::vector<std::size_t> params;    ///< indices into m_params
    std::vector<std::int64_t> offsets;  ///< element offset of each in flat
    torch::Tensor flat;
    std::size_t ready = 0;
    bool launched = false;
    PendingReduce pending;
  };
  void onGradientReady(std::size_t param);
  void launch(Bucket& bucket);

  RankGroup& m_group;
  std::vector<torch::Tensor> m_params;
  std::vector<std::shared_ptr<torch::autograd::Node>>
      m_accumulators;  ///< kept alive: they hold the hooks
  std::vector<std::size_t> m_bucket_of;
  std::vector<Bucket> m_buckets;
  std::mutex m_mutex;
  bool m_armed = false;
  double m_last_finish_s = 0;
  double m_last_launch_s = 0;
};

}  // namespace tb::trainer::distributed
