#include "trainer/training/flat_shard_adamw.h"

#include "trainer/training/sharded_checkpoint.h"

#include <stdexcept>

namespace tb::trainer {

FlatShardAdamW::FlatShardAdamW(distributed::ParameterShards& shards, ShardedAdamW::Options options)
    : m_shards(shards),
      m_options(options),
      m_exp_avg(shards.unitCount()),
      m_exp_avg_sq(shards.unitCount()),
      m_steps(shards.names().size(), 0) {
  for (std::size_t k = 0; k < m_steps.size(); ++k) m_decay.push_back(shards.shape(k).size() >= 2);
}

void FlatShardAdamW::zeroGrad() {
  for (std::size_t u = 0; u < m_shards.unitCount(); ++u) {
    const torch::Tensor& grad = m_shards.shard(u).grad();
    if (grad.defined()) grad.zero_();
  }
}

std::vector<torch::Tensor> FlatShardAdamW::shares() const {
  std::vector<torch::Tensor> out;
  for (std::size_t u = 0; u < m_shards.unitCount(); ++u) out.push_back(m_shards.shard(u));
  return out;
}

void FlatShardAdamW::step(double lr) {
  torch::NoGradGuard no_grad;
  // A unit steps when it has a gradient (after ParameterShards::finish(), every unit on every
  // rank), so the step counts stay the same on every rank.
  std::vector<bool> stepped(m_shards.unitCount());
  for (std::size_t u = 0; u < stepped.size(); ++u) {
    const torch::Tensor& share = m_shards.shard(u);
    stepped[u] = share.grad().defined();
    if (stepped[u] && !m_exp_avg[u].defined()) {
      m_exp_avg[u] = torch::zeros_like(share);
      m_exp_avg_sq[u] = torch::zeros_like(share);
    }
  }
  for (std::size_t k = 0; k < m_steps.size(); ++k) {
    if (stepped[m_shards.unitOf(k)]) ++m_steps[k];
  }
  for (const auto& piece : m_shards.pieces()) {
    if (!stepped[piece.unit]) continue;
    const torch::Tensor& share = m_shards.shard(piece.unit);
    auto part = [&](const torch::Tensor& t) { return t.narrow(0, piece.offset, piece.numel); };
    adamwUpdate(part(share), part(share.grad()), part(m_exp_avg[piece.unit]),
                part(m_exp_avg_sq[piece.unit]), m_steps[piece.param], lr, m_decay[piece.param],
                m_options);
  }
  m_shards.shareUpdatedShards();
}

void FlatShardAdamW::writeState(const std::filesystem::path* file,
                                const std::map<std::string, std::string>& metadata) {
  // Moments exist once a unit has stepped; a parameter that never stepped has only its count.
  std::vector<torch::Tensor> avg = m_exp_avg, avg_sq = m_exp_avg_sq;
  for (std::size_t u = 0; u < avg.size(); ++u) {
    if (!avg[u].defined()) {
      avg[u] = torch::zeros_like(m_shards.shard(u));
      avg_sq[u] = torch::zeros_like(m_shards.shard(u));
    }
  }
  NamedTensors steps;
  for (std::size_t k = 0; k < m_steps.size(); ++k) {
    steps.emplace_back(m_shards.names()[k] + ".step", torch::tensor({m_steps[k]}, torch::kInt64));
  }
  const auto stepped = [this](std::size_t k) { return m_steps[k] > 0; };
  writeGatheredFile(
      m_shards, file, steps,
      {GatheredSeries{&avg, ".exp_avg", stepped}, GatheredSeries{&avg_sq, ".exp_avg_sq", stepped}},
      metadata);
}

void FlatShardAdamW::loadState(const NamedTensors& state, bool every_parameter_listed) {
  const std::map<std::string, torch::Tensor> entries(state.begin(), state.end());
  std::vector<AdamWParameter> params;
  for (std::size_t k = 0; k < m_shards.names().size(); ++k)
    params.push_back({m_shards.names()[k], m_shards.shape(k), m_shards.dtype(k)});
  // Checked whole before anything changes.
  const std::vector<std::int64_t> steps =
      checkedAdamWSteps(entries, params, every_parameter_listed);
  auto shares = [&](const char* suffix) {
    return m_shards.scatterWhole([&](std::size_t k) {
      const auto it = entries.find(m_shards.names()[k] + suffix);
      return steps[k] > 0 && it != entries.end() ? it->second : torch::Tensor();
    });
  };
  m_exp_avg = shares(".exp_avg");
  m_exp_avg_sq = shares(".exp_avg_sq");
  m_steps = steps;
  // A unit none of whose parameters has stepped holds no moments yet.
  std::vector<bool> started(m_exp_avg.size(), false);
  for (std::size_t k = 0; k < m_steps.size(); ++k) {
    if (m_steps[k] > 0) started[m_shards.unitOf(k)] = true;
  }
  for (std::size_t u = 0; u < started.size(); ++u) {
    if (started[u]) continue;
    m_exp_avg[u] = torch::Tensor();
    m_exp_avg_sq[u] = torch::Tensor();
  }
}

std::vector<torch::Tensor> FlatShardAdamW::stateTensors() const {
  std::vector<torch::Tensor> out;
  for (std::size_t u = 0; u < m_exp_avg.size(); ++u) {
    if (m_exp_avg[u].defined()) {
      out.push_back(m_exp_avg[u]);
      out.push_back(m_exp_avg_sq[u]);
    }
  }
  return out;
}

}  // namespace tb::trainer
