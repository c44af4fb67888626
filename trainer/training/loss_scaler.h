#pragma once
// LossScaler: dynamic loss scaling for fp16 training (what torch.cuda.amp.GradScaler does in
// Python; LibTorch's C++ API has none). The loss is multiplied by the scale before backward, so
// small fp16 gradients do not flush to zero; before clipping the gradients are divided by it
// again. A step whose gradients hold an inf or NaN is skipped and the scale halved; after
// growth_interval clean steps in a row it doubles.

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace tb::trainer {

class LossScaler {
 public:
  struct Options {
    double init_scale = 65536.0;  ///< 2^16, as GradScaler
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int growth_interval = 2000;  ///< clean steps before the scale grows
  };

  explicit LossScaler(Options options);

  /// The current scale.
  double scale() const { return m_scale; }
  /// Clean steps since the last change of scale.
  std::int64_t cleanSteps() const { return m_clean_steps; }
  /// Steps skipped for overflowing gradients, in total.
  std::int64_t skippedSteps() const { return m_skipped; }

  /// `loss` x scale (what backward starts from).
  torch::Tensor scaled(const torch::Tensor& loss) const { return loss * m_scale; }

  /// Divides the gradients of `params` (those that have one) by the scale, in place, and says
  /// whether any of them holds an inf or NaN (one host synchronisation).
  bool unscale(const std::vector<torch::Tensor>& params) const;

  /// After unscale(): on overflow the step is skipped by the caller, the scale falls by
  /// backoff_factor and the clean count restarts; otherwise the clean count grows and, at
  /// growth_interval, the scale grows by growth_factor.
  void update(bool overflow);

  /// Restores a checkpointed state.
  void restore(double scale, std::int64_t clean_steps, std::int64_t skipped);

 private:
  Options m_options;
  double m_scale;
  std::int64_t m_clean_steps = 0;
  std::int64_t m_skipped = 0;
};

}  // namespace tb::trainer
