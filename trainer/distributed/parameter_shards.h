#pragma once
// ParameterShards: a model's parameters sharded over the ranks, as DeepSpeed ZeRO-2/3 and FSDP
// do. The parameters that require grad are grouped into units, and each unit is laid out as one
// flat buffer of N equal shares (N ranks, the last share padded with zeros). Rank r keeps share r
// of the values, which its optimiser updates (trainer/training/flat_shard_adamw.h), and share r
// of the gradients: backward copies a unit's gradients into a flat buffer as soon as they are all
// final, reduce-scatters it (every micro-step, so no rank ever keeps whole gradients) and drops
// them; this rank's share of the sum is added to its gradient share.
//
//   - zero2: the units are gradient buckets of about distributed.bucket_mb, in reverse
//     registration order (backward's order, as ddp's buckets). Every rank keeps the whole
//     parameters (its shares are views of them) and all-gathers them after each update.
//   - zero3: the units are the model's layers of the chosen types (distributed.zero3_units), one
//     each, plus one unit of every other parameter. A unit's whole parameters exist only while
//     it runs: all-gathered before its layer's forward and freed after it, gathered again when
//     backward reaches the layer (a hook on its output) and freed once its gradients are out.
//     The unit of the other parameters is gathered for the whole forward and backward.
//
// Freeing releases the unit buffer's storage (its size becomes 0 bytes) and gathering allocates
// it again: the parameters, and every view of them that autograd saved for backward, share that
// storage, so they are freed too and see the gathered values again in backward.

#include "trainer/distributed/rank_group.h"
#include "trainer/models/layer_runner.h"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace torch::autograd {
struct Node;
}

namespace tb::trainer::distributed {

class ParameterShards {
 public:
  enum class Stage { Zero2, Zero3 };
  struct Options {
    Stage stage = Stage::Zero2;
    double bucket_mb = 25;  ///< zero2: size of a unit
    /// zero3: the layer types that are units of their own (distributed.zero3_units).
    std::vector<std::string> unit_types = {"all"};
  };

  /// The part of one parameter that lies in this rank's share of its unit.
  struct Piece {
    std::size_t param;  ///< index into names()
    std::size_t unit;
    std::int64_t begin;   ///< its first element within the parameter (flattened)
    std::int64_t offset;  ///< where it lies in the unit's share
    std::int64_t numel;
  };

  /// Shards `params` (a module's named parameters; those without requires_grad are left whole
  /// and alone) from their current values, which must be the same on every rank. `layers`: the
  /// module's layers (zero3 units). Collective only in what it later does; building is local.
  /// Under zero3 the caller installs runner() in the model.
  ParameterShards(RankGroup& group,
                  const std::vector<std::pair<std::string, torch::Tensor>>& params,
                  const std::vector<ModelLayer>& layers, Options options);
  ~ParameterShards();
  ParameterShards(const ParameterShards&) = delete;
  ParameterShards& operator=(const ParameterShards&) = delete;

  Stage stage() const { return m_options.stage; }
  RankGroup& group() { return m_group; }

  // ---- running the model (zero3; under zero2 these do nothing)

  /// The model's layer runner: gathers the layer's unit before its forward and frees it after;
  /// in grad mode, gathers it again when backward reaches the layer's output.
  LayerRunner runner();
  /// Before a forward of the model: gathers the unit of the parameters outside the layers, which
  /// stays gathered until release().
  void beginForward();
  /// After backward (or after a forward without one): frees every unit still gathered.
  void release();
  /// Collective: rank `root` gets every unit whole and keeps it until release(), so that it runs
  /// the model alone, without collectives (validation on rank 0). `values`: per unit, the shares
  /// to gather instead of the parameters' own (an EMA's, see gatherWhole()); null for the
  /// parameters.
  void gatherOnRank(int root, const std::vector<torch::Tensor>* values = nullptr);

  // ---- gradients

  /// Arms the gradient hooks for the next backward (every micro-step: each unit's gradients are
  /// reduce-scattered as soon as backward has produced them all).
  void arm();
  /// After the step's last backward: starts the units whose gradients never all became final
  /// (missing ones count as zero), waits for every reduce-scatter and leaves in each share's
  /// .grad() the mean over ranks of the gradients, summed over the micro-steps. Disarms.
  void finish();
  /// Seconds spent in the last finish() (waiting, adding the shares) and starting reduce-scatters
  /// since the last arm() before it.
  double lastCommS() const { return m_last_comm_s; }

  // ---- the optimiser's view

  std::size_t unitCount() const { return m_units.size(); }
  /// This rank's share `[share]` of unit `u`'s values; its .grad() is the gradient share (after
  /// finish()). Updating it in place updates the parameters (after shareUpdatedShards()).
  torch::Tensor& shard(std::size_t u) { return m_units.at(u).shard; }
  /// The pieces of every parameter in this rank's shares, unit by unit.
  const std::vector<Piece>& pieces() const { return m_pieces; }
  /// The unit parameter `param` belongs to.
  std::size_t unitOf(std::size_t param) const { return m_unit_of.at(param); }
  /// The sharded parameters' names and whole shapes, in the module's order.
  const std::vector<std::string>& names() const { return m_names; }
  std::vector<std::int64_t> shape(std::size_t param) const;
  torch::ScalarType dtype(std::size_t param) const { return m_params.at(param).scalar_type(); }
  /// After the shares were updated: zero2 all-gathers every unit (the whole parameters follow);
  /// zero3 does nothing (the next forward gathers the new values).
  void shareUpdatedShards();

  // ---- whole values (checkpoints)

  /// Collective: unit by unit, gathers the whole unit of `values` (per unit, a `[share]` tensor
  /// laid out like shard(u): the parameters when null, an EMA, an optimiser moment) and calls
  /// `take(param, whole)` on rank 0 with each parameter's whole tensor (on the device, valid
  /// only during the call). At most one unit is whole at a time. With `wanted`, only the
  /// parameters it accepts are taken, and units without one are not gathered (it must answer
  /// alike on every rank).
  void gatherWhole(const std::vector<torch::Tensor>* values,
                   const std::function<void(std::size_t, const torch::Tensor&)>& take,
                   const std::function<bool(std::size_t)>& wanted = {});
  /// This rank's shares of whole tensors: `whole(param)` gives parameter `param`'s whole tensor
  /// (any device; undefined: zeros); returns one `[share]` tensor per unit, on the device.
  std::vector<torch::Tensor> scatterWhole(
      const std::function<torch::Tensor(std::size_t)>& whole) const;
  /// Sets this rank's shares from the module's parameters after something wrote them whole
  /// (loading weights): runs `write` with every unit whole and local (no collective), then keeps
  /// its shares and frees the units again (zero3).
  void updateFromWhole(const std::function<void()>& write);

 private:
  struct Unit {
    std::string name;
    std::vector<std::size_t> params;    ///< indices into m_params
    std::vector<std::int64_t> offsets;  ///< each parameter's first element in the unit
    std::int64_t numel = 0;
    std::int64_t share = 0;  ///< elements per rank
    torch::Tensor full;      ///< `[N x share]` on the device: the parameters are views of it
    torch::Tensor shard;     ///< `[share]`: this rank's values (a view of full under zero2)
    bool gathered = true;
    bool kept = false;      ///< stays gathered until release() (other parameters, gatherOnRank)
    std::size_t ready = 0;  ///< parameters whose gradient is final in this backward
    bool launched = false;
    torch::Tensor sum_in, sum_out;  ///< the reduce-scatter's buffers while it runs
    PendingReduce pending;
  };

  void buildUnits(const std::vector<ModelLayer>& layers);
  void addUnit(std::string name, std::vector<std::size_t> params);
  void gather(Unit& unit);
  void free(Unit& unit);
  void onGradientReady(std::size_t param);
  void launch(Unit& unit);
  void complete(Unit& unit);

  RankGroup& m_group;
  Options m_options;
  std::vector<torch::Tensor> m_params;
  std::vector<std::string> m_names;
  std::vector<std::size_t> m_unit_of;  ///< per parameter
  std::vector<Unit> m_units;
  std::vector<std::pair<std::string, std::size_t>> m_layer_units;  ///< layer name -> unit
  std::size_t m_rest = SIZE_MAX;  ///< zero3: the unit of the parameters outside the layers
  std::vector<Piece> m_pieces;
  std::vector<std::shared_ptr<torch::autograd::Node>>
      m_accumulators;  ///< kept alive: they hold the hooks
  std::recursive_mutex m_mutex;
  bool m_armed = false;
  bool m_local = false;  ///< gatherOnRank() made everything whole here: no collectives
  double m_comm_s = 0;   ///< since the last finish()
  double m_last_comm_s = 0;
};

}  // namespace tb::trainer::distributed
