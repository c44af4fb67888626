#pragma once
// Learning-rate schedule: linear warmup that reaches the configured rate exactly at
// warmup_steps, then constant or cosine down to lr x min_lr_ratio at the schedule's last step:
// max_steps, or for cosine_budget with a time budget the step the budget is estimated to end at
// (scheduleEndForBudget).
//
// magvit2-pytorch wires its warmup so that the generator's rate stays at lr / warmup_steps
// forever; here the rate for optimizer step s (1-based) is lr x s / warmup_steps while
// s < warmup_steps and lr at s = warmup_steps.

#include "core/run_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tb::trainer {

/// Rate for optimizer step `step` (1-based) with peak `peak`; the cosine reaches its floor at
/// step `end` (0: train.max_steps).
inline double scheduledRate(const core::TrainConfig& train, double peak, std::int64_t step,
                            std::int64_t end = 0) {
  if (train.warmup_steps > 0 && step < train.warmup_steps) {
    return peak * static_cast<double>(std::max<std::int64_t>(step, 1)) / train.warmup_steps;
  }
  if (train.schedule == core::Schedule::Cosine || train.schedule == core::Schedule::CosineBudget) {
    const std::int64_t last = end > 0 ? end : train.max_steps;
    const double span = std::max<std::int64_t>(1, last - train.warmup_steps);
    const double progress =
        std::clamp(static_cast<double>(step - train.warmup_steps) / span, 0.0, 1.0);
    const double floor = peak * train.min_lr_ratio;
    return floor + (peak - floor) * 0.5 * (1.0 + std::cos(3.14159265358979323846 * progress));
  }
  return peak;
}

/// Steps a session times, from the end of warmup, before a time budget fixes the cosine's last
/// step.
constexpr std::int64_t kScheduleFitSteps = 100;

/// The cosine's last step for a run with a time budget, fixed once from the speed measured so far:
/// at step `step`, having spent `spent_s` of `budget_s` training seconds and `seconds_per_step`
/// a step, the step the budget is estimated to end at (at least step + 1, at most max_steps).
inline std::int64_t scheduleEndForBudget(const core::TrainConfig& train, std::int64_t step,
                                         double spent_s, double budget_s, double seconds_per_step) {
  const double left = std::max(0.0, budget_s - spent_s) / std::max(seconds_per_step, 1e-9);
  const double end =
      std::min(static_cast<double>(step) + std::floor(left), static_cast<double>(train.max_steps));
  return std::max(static_cast<std::int64_t>(end), step + 1);
}

/// Where a run is expected to end, for progress reports: `step` is the last step, `eta_s` the
/// seconds to it.
struct ExpectedEnd {
  std::int64_t step = 0;
  double eta_s = 0;
};

/// At step `step`, going at `it_per_s` steps a second: max_steps, or, when the time budget runs
/// out first, the step it runs out at (the cosine's fitted end `schedule_end` while it lies
/// ahead, else the estimate at this speed) and the budget's seconds left.
inline ExpectedEnd expectedEnd(const core::TrainConfig& train, std::int64_t step, double it_per_s,
                               double spent_s, double budget_s, std::int64_t schedule_end) {
  ExpectedEnd end{train.max_steps, static_cast<double>(train.max_steps - step) / it_per_s};
  if (budget_s <= 0) return end;
  const double left_s = std::max(0.0, budget_s - spent_s);
  if (!(left_s < end.eta_s)) return end;
  end.eta_s = left_s;
  end.step = schedule_end > step
                 ? schedule_end
                 : scheduleEndForBudget(train, step, spent_s, budget_s, 1.0 / it_per_s);
  end.step = std::max(end.step, step);
  return end;
}

}  // namespace tb::trainer
