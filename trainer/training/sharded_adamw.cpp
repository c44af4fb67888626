#include "trainer/training/sharded_adamw.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

namespace tb::trainer {

ShardedAdamW::ShardedAdamW(const NamedTensors& params, Options options) : m_options(options) {
  for (const auto& [name, p] : params) {
    if (!p.requires_grad()) continue;
    m_slots.push_back({name, p, p.dim() >= 2, {}, {}, 0});
  }
  m_owner.assign(m_slots.size(), 0);
}

void ShardedAdamW::shard(int rank, int world_size) {
  m_rank = rank;
  m_world = world_size;
  std::int64_t total = 0;
  for (const auto& s : m_slots) total += s.param.numel();
  std::int64_t before = 0;
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    const std::int64_t n = m_slots[i].param.numel();
    // The rank whose equal share holds this parameter's middle element.
    const double middle = static_cast<double>(before) + static_cast<double>(n) / 2.0;
    m_owner[i] = std::min(world_size - 1,
                          static_cast<int>(middle * world_size / std::max<std::int64_t>(total, 1)));
    before += n;
  }
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    if (m_owner[i] != m_rank) {
      m_slots[i].exp_avg = torch::Tensor();
      m_slots[i].exp_avg_sq = torch::Tensor();
      m_slots[i].steps = 0;
    }
  }
}

void ShardedAdamW::zeroGrad() {
  for (auto& s : m_slots) {
    if (s.param.grad().defined()) s.param.mutable_grad().zero_();
  }
}

void adamwUpdate(const torch::Tensor& param, const torch::Tensor& grad,
                 const torch::Tensor& exp_avg, const torch::Tensor& exp_avg_sq, std::int64_t step,
                 double lr, bool decay, const ShardedAdamW::Options& options) {
  const double b1 = options.beta1, b2 = options.beta2;
  if (decay && options.weight_decay != 0) param.mul_(1 - lr * options.weight_decay);
  const double bias_correction1 = 1 - std::pow(b1, static_cast<double>(step));
  const double bias_correction2 = 1 - std::pow(b2, static_cast<double>(step));
  exp_avg.mul_(b1).add_(grad, 1 - b1);
  exp_avg_sq.mul_(b2).addcmul_(grad, grad, 1 - b2);
  const torch::Tensor denom = (exp_avg_sq.sqrt() / std::sqrt(bias_correction2)).add_(options.eps);
  param.addcdiv_(exp_avg, denom, -lr / bias_correction1);
}

// Parameter by parameter.
void ShardedAdamW::step(double lr) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    Slot& s = m_slots[i];
    if (m_owner[i] != m_rank || !s.param.grad().defined()) continue;
    if (!s.exp_avg.defined()) {
      s.exp_avg = torch::zeros_like(s.param, torch::MemoryFormat::Preserve);
      s.exp_avg_sq = torch::zeros_like(s.param, torch::MemoryFormat::Preserve);
      s.steps = 0;
    }
    adamwUpdate(s.param, s.param.grad(), s.exp_avg, s.exp_avg_sq, ++s.steps, lr, s.decay,
                m_options);
  }
}

void ShardedAdamW::shareUpdatedParameters(distributed::RankGroup& group) {
  if (!sharded()) return;
  torch::NoGradGuard no_grad;
  for (int r = 0; r < m_world; ++r) {
    std::vector<torch::Tensor> owned;
    for (std::size_t i = 0; i < m_slots.size(); ++i) {
      if (m_owner[i] == r) owned.push_back(m_slots[i].param.reshape({-1}));
    }
    if (owned.empty()) continue;
    std::vector<torch::Tensor> flat{torch::cat(owned)};
    group.broadcast(flat, r);
    if (r == m_rank) continue;
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < m_slots.size(); ++i) {
      if (m_owner[i] != r) continue;
      torch::Tensor& p = m_slots[i].param;
      p.copy_(flat[0].narrow(0, offset, p.numel()).view(p.sizes()));
      offset += p.numel();
    }
  }
}

NamedTensors ShardedAdamW::state(distributed::RankGroup* group) const {
  NamedTensors out;
  // Every parameter has its step count, 0 for one never updated (no moments yet), so a file that
  // lost entries is told apart from a parameter without state.
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    const Slot& s = m_slots[i];
    if (m_owner[i] != m_rank) continue;
    if (s.exp_avg.defined()) {
      out.emplace_back(s.name + ".exp_avg", s.exp_avg);
      out.emplace_back(s.name + ".exp_avg_sq", s.exp_avg_sq);
    }
    out.emplace_back(s.name + ".step",
                     torch::tensor({s.exp_avg.defined() ? s.steps : 0}, torch::kInt64));
  }
  if (!sharded() || group == nullptr) return out;
  // Rank 0 gathers every other owner's share: the step counts of its parameters first (0 means
  // no state yet), then their moments in one flat tensor.
  torch::NoGradGuard no_grad;
  for (int r = 1; r < m_world; ++r) {
    std::vector<std::size_t> owned;
    for (std::size_t i = 0; i < m_slots.size(); ++i) {
      if (m_owner[i] == r) owned.push_back(i);
    }
    if (owned.empty()) continue;
    torch::Tensor steps = torch::zeros({static_cast<std::int64_t>(owned.size())}, torch::kInt64);
    if (m_rank == r) {
      std::vector<torch::Tensor> moments;
      for (std::size_t k = 0; k < owned.size(); ++k) {
        const Slot& s = m_slots[owned[k]];
        if (!s.exp_avg.defined()) continue;
        steps[static_cast<std::int64_t>(k)] = s.steps;
        moments.push_back(s.exp_avg.reshape({-1}));
        moments.push_back(s.exp_avg_sq.reshape({-1}));
      }
      group->send(steps, 0);
      if (!moments.empty()) {
        torch::Tensor flat = torch::cat(moments);
        group->send(flat, 0);
      }
    } else if (m_rank == 0) {
      group->receive(steps, r);
      std::int64_t numel = 0;
      for (std::size_t k = 0; k < owned.size(); ++k) {
        if (steps[static_cast<std::int64_t>(k)].item<std::int64_t>() > 0)
          numel += 2 * m_slots[owned[k]].param.numel();
      }
      torch::Tensor flat =
          torch::empty({numel}, m_slots[owned.front()].param.options().requires_grad(false));
      if (numel > 0) group->receive(flat, r);  // the owner sends no moments when it has none
      std::int64_t offset = 0;
      for (std::size_t k = 0; k < owned.size(); ++k) {
        const std::int64_t count = steps[static_cast<std::int64_t>(k)].item<std::int64_t>();
        const Slot& s = m_slots[owned[k]];
        if (count > 0) {
          const std::int64_t n = s.param.numel();
          out.emplace_back(s.name + ".exp_avg",
                           flat.narrow(0, offset, n).view(s.param.sizes()).clone());
          out.emplace_back(s.name + ".exp_avg_sq",
                           flat.narrow(0, offset + n, n).view(s.param.sizes()).clone());
          offset += 2 * n;
        }
        out.emplace_back(s.name + ".step", torch::tensor({count}, torch::kInt64));
      }
    }
  }
  return out;
}

std::vector<std::int64_t> checkedAdamWSteps(const std::map<std::string, torch::Tensor>& state,
                                            const std::vector<AdamWParameter>& params,
                                            bool every_parameter_listed) {
  // Every entry must belong to a parameter: anything else is another model's state.
  std::set<std::string> names;
  for (const AdamWParameter& p : params) names.insert(p.name);
  for (const auto& [key, t] : state) {
    const auto dot = key.rfind('.');
    const std::string suffix = dot == std::string::npos ? std::string() : key.substr(dot + 1);
    const std::string param = dot == std::string::npos ? key : key.substr(0, dot);
    const bool known = (suffix == "exp_avg" || suffix == "exp_avg_sq" || suffix == "step") &&
                       names.count(param) > 0;
    if (!known)
      throw std::runtime_error("unexpected tensor '" + key +
                               "' (not the state of a parameter of this model)");
  }
  auto entry = [&](const std::string& key) -> const torch::Tensor& {
    const auto it = state.find(key);
    if (it == state.end()) throw std::runtime_error("missing tensor '" + key + "'");
    return it->second;
  };
  std::vector<std::int64_t> steps(params.size(), 0);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const AdamWParameter& p = params[i];
    if (!every_parameter_listed && !state.count(p.name + ".step")) continue;  // never updated
    const torch::Tensor& step = entry(p.name + ".step");
    if (step.scalar_type() != torch::kInt64 || step.dim() != 1 || step.size(0) != 1) {
      throw std::runtime_error("tensor '" + p.name + ".step': expected int64 of shape [1], got " +
                               c10::toString(step.scalar_type()) + " of shape " +
                               c10::str(step.sizes()));
    }
    steps[i] = step.item<std::int64_t>();
    if (steps[i] < 0)
      throw std::runtime_error("tensor '" + p.name + ".step': negative step count " +
                               std::to_string(steps[i]));
    const std::string avg = p.name + ".exp_avg", sq = p.name + ".exp_avg_sq";
    if (steps[i] == 0) {
      if (state.count(avg) || state.count(sq)) {
        throw std::runtime_error("tensor '" + p.name +
                                 ".step' is 0 but the file holds moments for it");
      }
      continue;
    }
    for (const std::string& key : {avg, sq}) {
      const torch::Tensor& t = entry(key);
      if (t.sizes() != c10::IntArrayRef(p.shape) || t.scalar_type() != p.dtype) {
        throw std::runtime_error("tensor '" + key + "': " + c10::toString(t.scalar_type()) +
                                 " of shape " + c10::str(t.sizes()) + ", the parameter is " +
                                 c10::toString(p.dtype) + " of shape " +
                                 c10::str(c10::IntArrayRef(p.shape)));
      }
    }
  }
  return steps;
}

void ShardedAdamW::loadState(const NamedTensors& state, bool every_parameter_listed) {
  const std::map<std::string, torch::Tensor> byName(state.begin(), state.end());
  std::vector<AdamWParameter> params;
  for (const Slot& s : m_slots)
    params.push_back({s.name, s.param.sizes().vec(), s.param.scalar_type()});
  // Checked whole before anything changes, so a bad file leaves the state as it was.
  const std::vector<std::int64_t> steps = checkedAdamWSteps(byName, params, every_parameter_listed);
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    Slot& s = m_slots[i];
    s.exp_avg = torch::Tensor();
    s.exp_avg_sq = torch::Tensor();
    s.steps = 0;
    if (m_owner[i] != m_rank || steps[i] == 0) continue;
    s.exp_avg = byName.at(s.name + ".exp_avg").to(s.param.options().requires_grad(false)).clone();
    s.exp_avg_sq =
        byName.at(s.name + ".exp_avg_sq").to(s.param.options().requires_grad(false)).clone();
    s.steps = steps[i];
  }
}

std::int64_t ShardedAdamW::stateBytes() const {
  std::int64_t bytes = 0;
  for (const auto& s : m_slots) {
    if (s.exp_avg.defined())
      bytes += 2 * s.exp_avg.numel() * static_cast<std::int64_t>(s.exp_avg.element_size());
  }
  return bytes;
}

std::vector<torch::Tensor> ShardedAdamW::parameters() const {
  std::vector<torch::Tensor> out;
  for (const auto& s : m_slots) out.push_back(s.param);
  return out;
}

}  // namespace tb::trainer
