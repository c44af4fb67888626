#include "trainer/training/loss_scaler.h"

#include <stdexcept>

namespace tb::trainer {

LossScaler::LossScaler(Options options) : m_options(options), m_scale(options.init_scale) {
  if (!(options.init_scale > 0) || !(options.growth_factor > 1) || !(options.backoff_factor > 0) ||
      !(options.backoff_factor < 1) || options.growth_interval < 1) {
    throw std::invalid_argument(
        "LossScaler: init_scale > 0, growth_factor > 1, 0 < backoff_factor < 1 and "
        "growth_interval >= 1 are required");
  }
}

bool LossScaler::unscale(const std::vector<torch::Tensor>& params) const {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> finite;
  const double inverse = 1.0 / m_scale;
  for (const auto& p : params) {
    if (!p.grad().defined()) continue;
    torch::Tensor g = p.mutable_grad();
    g.mul_(inverse);
    finite.push_back(torch::isfinite(g).all());
  }
  if (finite.empty()) return false;
  return !torch::stack(finite).all().item<bool>();
}

void LossScaler::update(bool overflow) {
  if (overflow) {
    m_scale *= m_options.backoff_factor;
    m_clean_steps = 0;
    ++m_skipped;
    return;
  }
  if (++m_clean_steps >= m_options.growth_interval) {
    m_scale *= m_options.growth_factor;
    m_clean_steps = 0;
  }
}

void LossScaler::restore(double scale, std::int64_t clean_steps, std::int64_t skipped) {
  if (!(scale > 0)) throw std::invalid_argument("LossScaler: a checkpointed scale must be > 0");
  m_scale = scale;
  m_clean_steps = clean_steps;
  m_skipped = skipped;
}

}  // namespace tb::trainer
