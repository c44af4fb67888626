#pragma once
// Learning-rate schedule: linear warmup that reaches the configured rate exactly at
// warmup_steps, then constant or cosine down to lr x min_lr_ratio at max_steps.
//
// magvit2-pytorch wires its warmup so that the generator's rate stays at lr / warmup_steps
// forever; here the rate for optimizer step s (1-based) is lr x s / warmup_steps while
// s < warmup_steps and lr at s = warmup_steps.

#include "core/run_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tb::trainer {

/// Rate for optimizer step `step` (1-based) with peak `peak`.
inline double scheduledRate(const core::TrainConfig& train, double peak, std::int64_t step) {
  if (train.warmup_steps > 0 && step < train.warmup_steps) {
    return peak * static_cast<double>(std::max<std::int64_t>(step, 1)) / train.warmup_steps;
  }
  if (train.schedule == "cosine") {
    const double span = std::max<std::int64_t>(1, train.max_steps - train.warmup_steps);
    const double progress =
        std::clamp(static_cast<double>(step - train.warmup_steps) / span, 0.0, 1.0);
    const double floor = peak * train.min_lr_ratio;
    return floor + (peak - floor) * 0.5 * (1.0 + std::cos(3.14159265358979323846 * progress));
  }
  return peak;
}

}  // namespace tb::trainer
