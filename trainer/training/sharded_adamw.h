#pragma once
// ShardedAdamW: AdamW (decoupled weight decay, as torch.optim.AdamW) whose state is keyed by
// parameter name, so a checkpoint written at one world size loads at any other, and which can
// keep the state of only its own share of the parameters (ZeRO stage 1): each rank updates its
// share, then the owners broadcast the updated parameters.

#include "trainer/distributed/rank_group.h"
#include "trainer/weights/state_dict_io.h"

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer {

using weights::NamedTensors;

class ShardedAdamW {
 public:
  struct Options {
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 0.0;  ///< applied to parameters with >= 2 dimensions only
  };

  /// `params`: named parameters (those without requires_grad are left alone). Owns every one
  /// until shard() says otherwise.
  ShardedAdamW(const NamedTensors& params, Options options);

  /// This rank keeps state for, and updates, only its share: contiguous runs of parameters of
  /// about equal size, rank r the r-th run.
  void shard(int rank, int world_size);
  /// The rank that owns parameter `index`.
  int owner(std::size_t index) const { return m_owner[index]; }
  bool sharded() const { return m_world > 1; }

  void zeroGrad();
  /// One AdamW step at rate `lr` of the owned parameters that have a gradient.
  void step(double lr);
  /// ZeRO-1: every owner sends the parameters it updated to all ranks.
  void shareUpdatedParameters(distributed::RankGroup& group);

  /// The whole state, keyed "<parameter>.exp_avg", ".exp_avg_sq" (float, the parameter's shape;
  /// absent while the parameter was never updated) and ".step" (int64 [1], every parameter; 0
  /// when never updated). When sharded this is collective: every rank must call it, and only
  /// rank 0's result is complete (the others return their own share).
  NamedTensors state(distributed::RankGroup* group) const;
  /// Takes the entries of the parameters this rank owns from a full state (others checked, then
  /// ignored). The state must be complete: throws std::runtime_error naming the tensor that is
  /// missing, unexpected, or of the wrong dtype or shape, and then changes nothing. With
  /// `every_parameter_listed` false (files written before every parameter had a ".step"), a
  /// parameter without entries was never updated.
  void loadState(const NamedTensors& state, bool every_parameter_listed = true);

  /// Bytes of optimizer state this rank holds.
  std::int64_t stateBytes() const;
  /// The parameters it was given, in order.
  std::vector<torch::Tensor> parameters() const;

 private:
  struct Slot {
    std::string name;
    torch::Tensor param;
    bool decay;
    torch::Tensor exp_avg, exp_avg_sq;  ///< undefined until the first update
    std::int64_t steps = 0;
  };
  std::vector<Slot> m_slots;
  std::vector<int> m_owner;
  Options m_options;
  int m_rank = 0;
  int m_world = 1;
};

}  // namespace tb::trainer
