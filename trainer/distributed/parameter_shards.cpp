#include "trainer/distributed/parameter_shards.h"

#include "trainer/distributed/gradient_reducer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>

namespace tb::trainer::distributed {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Gives the storage under `t` (and under every view of it) `bytes` of fresh memory from its own
// allocator, or none: what FSDP does with storage().resize_(). Contents are undefined.
void resizeStorage(const torch::Tensor& t, std::size_t bytes) {
  c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));
  storage->set_nbytes(bytes);
}

std::size_t bytesOf(const torch::Tensor& t) {
  return static_cast<std::size_t>(t.numel()) * t.element_size();
}

}  // namespace

ParameterShards::ParameterShards(RankGroup& group,
                                 const std::vector<std::pair<std::string, torch::Tensor>>& params,
                                 const std::vector<ModelLayer>& layers, Options options)
    : m_group(group), m_options(std::move(options)) {
  for (const auto& [name, p] : params) {
    if (!p.requires_grad()) continue;
    m_names.push_back(name);
    m_params.push_back(p);
  }
  m_unit_of.assign(m_params.size(), SIZE_MAX);
  buildUnits(layers);

  const std::int64_t rank = group.rank();
  for (std::size_t u = 0; u < m_units.size(); ++u) {
    const Unit& unit = m_units[u];
    const std::int64_t lo = rank * unit.share, hi = lo + unit.share;
    for (std::size_t i = 0; i < unit.params.size(); ++i) {
      const std::int64_t begin = std::max(lo, unit.offsets[i]);
      const std::int64_t end = std::min(hi, unit.offsets[i] + m_params[unit.params[i]].numel());
      if (begin < end)
        m_pieces.push_back({unit.params[i], u, begin - unit.offsets[i], begin - lo, end - begin});
    }
  }

  m_accumulators = onGradientsAccumulated(m_params, [this](std::size_t k) { onGradientReady(k); });
}

ParameterShards::~ParameterShards() {
  // Hooks stay on the accumulators (LibTorch cannot remove a post hook); disarmed they do nothing.
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  m_armed = false;
}

void ParameterShards::buildUnits(const std::vector<ModelLayer>& layers) {
  if (m_options.stage == Stage::Zero2) {
    for (auto& bucket : gradientBuckets(m_params, m_options.bucket_mb)) {
      addUnit("bucket " + std::to_string(m_units.size()), std::move(bucket));
    }
    return;
  }

  std::map<const c10::TensorImpl*, std::size_t> index;
  for (std::size_t k = 0; k < m_params.size(); ++k) index[m_params[k].unsafeGetTensorImpl()] = k;
  const auto& types = m_options.unit_types;
  const bool all = std::find(types.begin(), types.end(), "all") != types.end();
  for (const ModelLayer& layer : layers) {
    if (!all && std::find(types.begin(), types.end(), layer.type) == types.end()) continue;
    std::vector<std::size_t> members;
    for (const torch::nn::Module* module : layer.modules) {
      for (const auto& p : module->parameters()) {
        const auto it = index.find(p.unsafeGetTensorImpl());
        if (it != index.end() && m_unit_of[it->second] == SIZE_MAX) members.push_back(it->second);
      }
    }
    if (members.empty()) continue;
    std::sort(members.begin(), members.end());
    m_layer_units.emplace_back(layer.name, m_units.size());
    addUnit(layer.name, std::move(members));
  }
  std::vector<std::size_t> rest;
  for (std::size_t k = 0; k < m_params.size(); ++k) {
    if (m_unit_of[k] == SIZE_MAX) rest.push_back(k);
  }
  if (!rest.empty()) {
    m_rest = m_units.size();
    addUnit("other parameters", std::move(rest));
  }
}

void ParameterShards::addUnit(std::string name, std::vector<std::size_t> params) {
  torch::NoGradGuard no_grad;
  Unit unit;
  unit.name = std::move(name);
  unit.params = std::move(params);
  const torch::Tensor& first = m_params[unit.params.front()];
  for (const std::size_t k : unit.params) {
    const torch::Tensor& p = m_params[k];
    if (p.scalar_type() != first.scalar_type() || p.device() != first.device()) {
      throw std::invalid_argument(
          "sharded unit \"" + unit.name + "\" mixes " + c10::toString(first.scalar_type()) +
          " and " + c10::toString(p.scalar_type()) + " parameters (" + m_names[k] + ")");
    }
    m_unit_of[k] = m_units.size();
    unit.offsets.push_back(unit.numel);
    unit.numel += p.numel();
  }
  const std::int64_t world = m_group.worldSize();
  unit.share = std::max<std::int64_t>(1, (unit.numel + world - 1) / world);
  unit.full = torch::zeros({world * unit.share}, first.options().requires_grad(false));
  // The parameters become views of the unit's buffer (same tensors, so the module, autograd and
  // the hooks keep them); their values move into it.
  for (std::size_t i = 0; i < unit.params.size(); ++i) {
    const torch::Tensor& p = m_params[unit.params[i]];
    torch::Tensor view = unit.full.narrow(0, unit.offsets[i], p.numel());
    view.copy_(p.detach().reshape({-1}));
    p.set_data(view.view(p.sizes()));
  }
  torch::Tensor mine = unit.full.narrow(0, m_group.rank() * unit.share, unit.share);
  if (m_options.stage == Stage::Zero2) {
    unit.shard = mine;
  } else {
    unit.shard = mine.clone();
    resizeStorage(unit.full, 0);
    unit.gathered = false;
  }
  m_units.push_back(std::move(unit));
}

std::vector<std::int64_t> ParameterShards::shape(std::size_t param) const {
  const auto sizes = m_params.at(param).sizes();
  return {sizes.begin(), sizes.end()};
}

void ParameterShards::gather(Unit& unit) {
  if (unit.gathered) return;
  resizeStorage(unit.full, bytesOf(unit.full));
  m_group.allGather(unit.full, unit.shard);
  unit.gathered = true;
}

void ParameterShards::free(Unit& unit) {
  if (m_options.stage != Stage::Zero3 || !unit.gathered || unit.kept) return;
  resizeStorage(unit.full, 0);
  unit.gathered = false;
}

LayerRunner ParameterShards::runner() {
  return [this](const std::string& name,
                const std::function<torch::Tensor()>& forward) -> torch::Tensor {
    if (m_options.stage != Stage::Zero3 || m_local) return forward();
    const auto it = std::find_if(m_layer_units.begin(), m_layer_units.end(),
                                 [&](const auto& entry) { return entry.first == name; });
    if (it == m_layer_units.end()) return forward();  // its parameters are in the other unit
    const std::size_t u = it->second;
    {
      std::lock_guard<std::recursive_mutex> guard(m_mutex);
      gather(m_units[u]);
    }
    torch::Tensor y = forward();
    if (y.requires_grad()) {
      // Backward reaches the layer through its output: the parameters are needed again.
      y.register_hook([this, u](const torch::Tensor&) {
        std::lock_guard<std::recursive_mutex> guard(m_mutex);
        gather(m_units[u]);
      });
    }
    std::lock_guard<std::recursive_mutex> guard(m_mutex);
    free(m_units[u]);
    return y;
  };
}

void ParameterShards::beginForward() {
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  if (m_options.stage != Stage::Zero3 || m_local || m_rest == SIZE_MAX) return;
  gather(m_units[m_rest]);
  m_units[m_rest].kept = true;
}

void ParameterShards::release() {
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  m_local = false;
  for (Unit& unit : m_units) {
    unit.kept = false;
    free(unit);
  }
}

void ParameterShards::gatherOnRank(int root, const std::vector<torch::Tensor>* values) {
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  if (m_options.stage != Stage::Zero3) return;
  const bool mine = m_group.rank() == root;
  for (std::size_t u = 0; u < m_units.size(); ++u) {
    Unit& unit = m_units[u];
    if (!unit.gathered) resizeStorage(unit.full, bytesOf(unit.full));
    m_group.allGather(unit.full, values ? (*values)[u] : unit.shard);
    unit.gathered = true;
    unit.kept = mine;
    if (!mine) free(unit);
  }
  m_local = mine;
}

void ParameterShards::arm() {
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  for (Unit& unit : m_units) {
    unit.ready = 0;
    unit.launched = false;
  }
  m_armed = true;
}

void ParameterShards::onGradientReady(std::size_t param) {
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  if (!m_armed) return;
  Unit& unit = m_units[m_unit_of[param]];
  if (unit.launched) return;
  if (++unit.ready == unit.params.size()) launch(unit);
}

// The unit's gradients go into one flat buffer on the backend's device (no rank keeps them
// whole), its reduce-scatter starts, and under zero3 its parameters are freed: backward is done
// with them.
void ParameterShards::launch(Unit& unit) {
  const auto start = Clock::now();
  torch::NoGradGuard no_grad;
  if (unit.pending.valid()) complete(unit);  // the previous micro-step's
  const auto options = unit.full.options().device(m_group.commDevice());
  unit.sum_in = torch::empty({unit.full.numel()}, options);
  for (std::size_t i = 0; i < unit.params.size(); ++i) {
    torch::Tensor& p = m_params[unit.params[i]];
    torch::Tensor slice = unit.sum_in.narrow(0, unit.offsets[i], p.numel());
    if (p.grad().defined()) {
      slice.copy_(p.grad().reshape({-1}));
    } else {
      slice.zero_();
    }
    p.mutable_grad() = torch::Tensor();
  }
  unit.sum_in.narrow(0, unit.numel, unit.sum_in.numel() - unit.numel).zero_();
  unit.sum_out = torch::empty({unit.share}, options);
  unit.pending = m_group.reduceScatterSumAsync(unit.sum_in, unit.sum_out);
  unit.launched = true;
  free(unit);
  m_comm_s += secondsSince(start);
}

// Waits for the unit's reduce-scatter and adds this rank's share of the mean to its gradient.
void ParameterShards::complete(Unit& unit) {
  if (!unit.pending.valid()) return;
  const auto start = Clock::now();
  m_group.wait(unit.pending);
  torch::NoGradGuard no_grad;
  const double scale = 1.0 / m_group.worldSize();
  torch::Tensor& grad = unit.shard.mutable_grad();
  if (grad.defined()) {
    grad.add_(unit.sum_out.to(grad.device()), scale);
  } else {
    grad = unit.sum_out.to(unit.shard.device(), /*non_blocking=*/false, /*copy=*/true).mul_(scale);
  }
  unit.sum_in = torch::Tensor();
  unit.sum_out = torch::Tensor();
  m_comm_s += secondsSince(start);
}

void ParameterShards::finish() {
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  for (Unit& unit : m_units) {
    if (!unit.launched) launch(unit);
  }
  m_armed = false;
  torch::NoGradGuard no_grad;
  for (Unit& unit : m_units) {
    complete(unit);
    unit.launched = false;
  }
  m_last_comm_s = m_comm_s;
  m_comm_s = 0;
}

void ParameterShards::shareUpdatedShards() {
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  if (m_options.stage != Stage::Zero2) return;
  torch::NoGradGuard no_grad;
  for (Unit& unit : m_units) m_group.allGather(unit.full, unit.shard);
}

void ParameterShards::gatherWhole(
    const std::vector<torch::Tensor>* values,
    const std::function<void(std::size_t, const torch::Tensor&)>& take,
    const std::function<bool(std::size_t)>& wanted) {
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  torch::NoGradGuard no_grad;
  for (std::size_t u = 0; u < m_units.size(); ++u) {
    Unit& unit = m_units[u];
    if (wanted && std::none_of(unit.params.begin(), unit.params.end(), wanted)) continue;
    torch::Tensor whole;
    if (values == nullptr && unit.gathered) {
      whole = unit.full;  // zero2: every rank holds it
    } else {
      whole = torch::empty_like(unit.full);
      m_group.allGather(whole, values ? (*values)[u] : unit.shard);
    }
    if (m_group.rank() != 0) continue;
    for (std::size_t i = 0; i < unit.params.size(); ++i) {
      const std::size_t k = unit.params[i];
      if (!wanted || wanted(k))
        take(k, whole.narrow(0, unit.offsets[i], m_params[k].numel()).view(m_params[k].sizes()));
    }
  }
}

std::vector<torch::Tensor> ParameterShards::scatterWhole(
    const std::function<torch::Tensor(std::size_t)>& whole) const {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> out;
  for (const Unit& unit : m_units) out.push_back(torch::zeros({unit.share}, unit.shard.options()));
  for (const Piece& piece : m_pieces) {
    const torch::Tensor w = whole(piece.param);
    if (!w.defined()) continue;
    out[piece.unit]
        .narrow(0, piece.offset, piece.numel)
        .copy_(w.reshape({-1}).narrow(0, piece.begin, piece.numel));
  }
  return out;
}

void ParameterShards::updateFromWhole(const std::function<void()>& write) {
  std::lock_guard<std::recursive_mutex> guard(m_mutex);
  torch::NoGradGuard no_grad;
  for (Unit& unit : m_units) {
    if (unit.gathered) continue;
    resizeStorage(unit.full, bytesOf(unit.full));
    unit.full.zero_();  // the padding of the last share
    unit.gathered = true;
  }
  try {
    write();
  } catch (...) {
    release();
    throw;
  }
  if (m_options.stage == Stage::Zero3) {
    for (Unit& unit : m_units)
      unit.shard.copy_(unit.full.narrow(0, m_group.rank() * unit.share, unit.share));
  }
  release();
}

}  // namespace tb::trainer::distributed
