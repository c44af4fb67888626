#pragma once
// FlatShardAdamW: AdamW over the flat parameter shares of ParameterShards (distributed.strategy
// zero2 and zero3). Each rank keeps the moments of its own shares only, and updates those shares
// piece by piece (a piece is the part of one parameter in a share), with the arithmetic, the
// step counts and the weight-decay rule (parameters of >= 2 dimensions) of ShardedAdamW. Its
// checkpoint state is ShardedAdamW's file (whole tensors keyed by parameter name), gathered one
// unit at a time, so it loads under any strategy and world size, and loads theirs.

#include "trainer/distributed/parameter_shards.h"
#include "trainer/training/sharded_adamw.h"

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tb::trainer {

class FlatShardAdamW {
 public:
  FlatShardAdamW(distributed::ParameterShards& shards, ShardedAdamW::Options options);

  /// Zeroes the gradient shares.
  void zeroGrad();
  /// One AdamW step at rate `lr` of this rank's shares (their gradients from
  /// ParameterShards::finish()), then ParameterShards::shareUpdatedShards().
  void step(double lr);
  /// The shares, whose .grad() are the gradients: what loss scaling and clipping work on.
  std::vector<torch::Tensor> shares() const;

  /// Collective: writes the whole state, as ShardedAdamW::state() names it ("<parameter>.exp_avg",
  /// ".exp_avg_sq" for parameters updated at least once, ".step" int64 [1] for every one), to
  /// `file` on rank 0 (null on the other ranks), gathered unit by unit.
  void writeState(const std::filesystem::path* file,
                  const std::map<std::string, std::string>& metadata);
  /// Takes this rank's shares of a whole state (any strategy's, any world size), checked as
  /// checkedAdamWSteps() checks it (throws std::runtime_error naming the tensor; then nothing
  /// changes). With `every_parameter_listed` false (files before state_version 2), entries missing
  /// for a parameter mean it was never updated.
  void loadState(const NamedTensors& state, bool every_parameter_listed = true);

  /// The state tensors this rank holds (moments of its shares).
  std::vector<torch::Tensor> stateTensors() const;

 private:
  distributed::ParameterShards& m_shards;
  ShardedAdamW::Options m_options;
  std::vector<torch::Tensor> m_exp_avg,
      m_exp_avg_sq;                   ///< per unit `[share]`; undefined before the first step
  std::vector<std::int64_t> m_steps;  ///< per parameter, the same on every rank
  std::vector<bool> m_decay;          ///< per parameter: >= 2 dimensions
};

}  // namespace tb::trainer
