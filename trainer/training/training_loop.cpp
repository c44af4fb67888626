#include "trainer/training/training_loop.h"

#include "core/metric_names.h"
#include "trainer/distributed/parameter_shards.h"
#include "trainer/runtime_info.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <unistd.h>

namespace tb::trainer {

namespace {

// "1200 s", "0.138 s": for the log, whole seconds from 100 s on, three significant digits below.
std::string seconds(double s) {
  if (s >= 100) return std::to_string(std::llround(s)) + " s";
  std::ostringstream text;
  text.precision(3);
  text << s << " s";
  return text.str();
}

// The value named `name` in `values`; a step's values always hold train/loss.
double& valueOf(Values& values, std::string_view name) {
  const auto it =
      std::find_if(values.begin(), values.end(), [&](const auto& e) { return e.first == name; });
  if (it == values.end()) throw std::logic_error("no value " + std::string(name) + " in the step");
  return it->second;
}

// Removes the value named `name` from `values` and returns it; nothing when absent.
std::optional<double> takeValue(Values& values, std::string_view name) {
  const auto it =
      std::find_if(values.begin(), values.end(), [&](const auto& e) { return e.first == name; });
  if (it == values.end()) return std::nullopt;
  const double value = it->second;
  values.erase(it);
  return value;
}

}  // namespace

int TrainingLoop::runSteps() {
  const std::unique_ptr<core::RunLock> lock = openRunDirectory();
  if (m_group)
    m_log(distributed::describe(m_group->launch()) + ", pid " + std::to_string(::getpid()));
  checkUnsupported();
  setUp();
  restoreWeights();
  openOutputs();

  // The time budget is training time: setting up, resuming and fitting the reference (seconds to
  // minutes before step 0) do not spend it.
  m_session_start = Clock::now();
  m_fit_start = {};
  m_budget_s = m_options.time_budget_s > 0 ? m_options.time_budget_s : m_train.time_budget_s;
  const std::int64_t total = m_train.max_steps;
  m_log("training " + std::to_string(countParameters(*m_tokenizer)) + " parameters from step " +
        std::to_string(m_progress.step) + " to " + std::to_string(total));
  m_interval.start = Clock::now();
  std::string status = "completed";
  while (m_progress.step < total) {
    if (!m_group) {
      m_agreed.stop = m_control.stop.load();
      m_agreed.budget_spent = budgetSpent();
    }
    if (m_agreed.stop) {
      status = "stopped";
      break;
    }
    if (m_agreed.budget_spent) {
      m_log("time budget of " + seconds(m_budget_s) + " reached");
      break;
    }
    if (const std::optional<Values> values = attemptStep()) afterStep(*values);
  }
  m_progress.elapsed_s += secondsSince(m_session_start);
  if (m_last_checkpoint != m_progress.step) saveCheckpoint();
  if (m_group) {
    // Every rank past its last wait on the store before rank 0, which may serve it, exits: a
    // rank still polling for the final checkpoint's signal would find the store gone.
    std::vector<torch::Tensor> all_done{torch::zeros({1}, torch::kFloat64)};
    m_group->allReduceSum(all_done);
  }
  if (m_rank0) m_metrics->close();
  m_events.emit(core::DoneEvent{status, m_progress.step});
  m_log("done: " + status + " at step " + std::to_string(m_progress.step) +
        "; peak resident memory " + std::to_string(peakResidentBytes()) + " bytes");
  return 0;
}

// One optimizer step: the micro-steps, the reduction, the ranks' agreement on the step's values
// and requests, then the update. Returns the step's values, or nothing when the step was skipped
// (an fp16 overflow, or non-finite values: see recoverFromNonFiniteStep).
std::optional<Values> TrainingLoop::attemptStep() {
  const std::int64_t next = m_progress.step + 1;
  const bool gan = ganActive();
  const double lr = rate(m_train.lr, next);
  const double discr_lr = rate(m_train.discr_lr, next - m_config.loss.discr_start_step);
  const StepResult result = m_steps->run(
      [&] {
        data::LoadedBatch batch;
        try {
          batch = m_loader->next();
        } catch (const TrainingError&) {  // a DataError: the files that failed are named first
          reportDataSkips(m_dataset->takeNewSkips());
          throw;
        }
        ++m_progress.batches;
        m_interval.data_wait += batch.wait_s;
        // Pinned host memory (the loader's, on CUDA) makes this copy asynchronous.
        return batch.clips.to(m_device, /*non_blocking=*/true);
      },
      gan, m_progress.step - m_config.loss.discr_start_step);
  m_interval.comm += result.comm_s;
  const bool overflow = result.overflow;
  // The step's values stayed on the device until this one copy to the host. The gradient norms
  // are the same on every rank; the other values are agreed on (averaged) across the ranks.
  Values values = hostValues(result.values());
  const double grad_norm = takeValue(values, core::metric::kTrainGradNorm).value_or(0.0);
  const double discr_grad_norm = takeValue(values, core::metric::kTrainDiscrGradNorm).value_or(0.0);
  agreeAcrossRanks(values);
  if (m_options.nonfinite_loss && m_options.nonfinite_loss(next))
    valueOf(values, core::metric::kTrainLoss) = std::numeric_limits<double>::quiet_NaN();
  const double loss_value = valueOf(values, core::metric::kTrainLoss);
  const LossScaler* scaler = m_steps->lossScaler();
  if (overflow && scaler != nullptr && scaler->scale() >= 1.0) {
    // Overflowing fp16 gradients are expected now and then: the scaler has lowered its scale,
    // and the step is skipped without counting as a non-finite step (below a scale of 1 they
    // do count: then the gradients themselves are not finite).
    m_steps->zeroGrad(gan);
    return std::nullopt;
  }
  if (!std::isfinite(loss_value) || !std::isfinite(grad_norm) || !std::isfinite(discr_grad_norm)) {
    m_steps->zeroGrad(gan);
    recoverFromNonFiniteStep(next, !std::isfinite(loss_value)  ? "loss"
                                   : !std::isfinite(grad_norm) ? "gradient norm"
                                                               : "discriminator gradient norm");
    return std::nullopt;
  }
  m_consecutive_bad = 0;
  reportDataSkips(m_dataset->takeNewSkips());
  m_steps->optimizerStep(lr, discr_lr, gan);
  m_progress.step = next;
  if (m_steps->parametersSharded()) {
    m_steps->updateShardedEma(m_train, m_progress.step);  // every rank its shares
  } else if (m_rank0) {
    updateEma();
  }
  if (!m_state_logged) {
    // The state exists after the first update; under zero1 each rank holds about 1/N of it,
    // under zero2 of it and the gradients, under zero3 of everything.
    const TrainingStep::HeldBytes held = m_steps->heldBytes();
    m_log("held on this rank after the first step: parameters " + std::to_string(held.parameters) +
          " bytes, gradients " + std::to_string(held.gradients) + " bytes, optimizer state " +
          std::to_string(held.optimizer_state) + " bytes");
    m_state_logged = true;
  }
  values.emplace_back(std::string(core::metric::kTrainGradNorm), grad_norm);
  if (gan) values.emplace_back(std::string(core::metric::kTrainDiscrGradNorm), discr_grad_norm);
  if (scaler != nullptr) {
    values.emplace_back(std::string(core::metric::kTrainLossScale), scaler->scale());
    values.emplace_back(std::string(core::metric::kTrainOverflowSteps),
                        static_cast<double>(scaler->skippedSteps()));
  }
  return values;
}

// One small all-reduce per step: the logged values become means over the global batch, the
// stop, checkpoint and time-budget requests of any rank hold for all, at the same step, and the
// training seconds spent are the ranks' mean.
void TrainingLoop::agreeAcrossRanks(Values& values) {
  const double spent_s = spentSeconds();
  if (!m_group) {
    m_agreed.checkpoint_now = m_control.checkpoint.exchange(false);
    m_agreed.spent_s = spent_s;
    return;
  }
  std::vector<double> packed;
  for (const auto& [name, v] : values) packed.push_back(v);
  packed.push_back(m_control.stop.load() ? 1 : 0);
  packed.push_back(m_control.checkpoint.exchange(false) ? 1 : 0);
  packed.push_back(budgetSpent() ? 1 : 0);
  packed.push_back(spent_s);
  std::vector<torch::Tensor> agreed{torch::tensor(packed, torch::kFloat64)};
  m_group->allReduceSum(agreed);
  const auto* a = agreed[0].data_ptr<double>();
  for (std::size_t i = 0; i < values.size(); ++i) values[i].second = a[i] / m_group->worldSize();
  m_agreed.stop = a[values.size()] > 0;
  m_agreed.checkpoint_now = a[values.size() + 1] > 0;
  m_agreed.budget_spent = a[values.size() + 2] > 0;
  m_agreed.spent_s = a[values.size() + 3] / m_group->worldSize();
}

// With a time budget, cosine_budget's cosine ends where the budget is estimated to run out
// rather than at max_steps: fixed once, from the speed of kScheduleFitSteps steps timed from the
// end of warmup (or of this session's first step: the first steps of a process are the slowest),
// and kept in checkpoints so that a resumed run follows the same schedule. Every rank computes it
// from the agreed seconds.
void TrainingLoop::fitScheduleToBudget() {
  const std::int64_t steps = m_progress.step - m_fit_start.step;
  const double seconds_per_step = (m_agreed.spent_s - m_fit_start.spent_s) / steps;
  m_progress.schedule_end = scheduleEndForBudget(m_train, m_progress.step, m_agreed.spent_s,
                                                 m_budget_s, seconds_per_step);
  m_log("cosine schedule fitted to the time budget of " + seconds(m_budget_s) +
        ": it ends at step " + std::to_string(m_progress.schedule_end) + " (" +
        seconds(seconds_per_step) + " a step over steps " + std::to_string(m_fit_start.step + 1) +
        "-" + std::to_string(m_progress.step) + ")");
}

// A step with non-finite values is skipped; train.nan_max_consecutive of them in a row roll back
// to the newest checkpoint at a lower rate, and rollbacks that do not help end the run.
void TrainingLoop::recoverFromNonFiniteStep(std::int64_t next, const std::string& what) {
  ++m_consecutive_bad;
  emitWarning(std::string(core::warning_code::kNonfiniteStep),
              "step " + std::to_string(next) + ": non-finite " + what + ", step skipped");
  if (m_consecutive_bad < m_train.nan_max_consecutive) return;
  const auto latest = m_store.latest();
  if (!latest) {
    throw TrainingError("diverged",
                        std::to_string(m_consecutive_bad) +
                            " non-finite steps in a row and no checkpoint to roll back to",
                        "lower train.lr or raise train.warmup_steps");
  }
  // A cause that the learning rate does not fix (broken weights or data) would roll back for
  // ever: after nan_max_rollbacks without a new checkpoint the run ends.
  if (m_rollbacks_without_checkpoint >= m_train.nan_max_rollbacks) {
    throw TrainingError("diverged",
                        std::to_string(m_rollbacks_without_checkpoint) +
                            " rollbacks to checkpoints/step_" + std::to_string(*latest) +
                            " in a row and the steps after it are still non-finite",
                        "lower train.lr, raise train.warmup_steps, or look for NaN in the data and "
                        "weight files (see docs/troubleshooting.md)");
  }
  ++m_rollbacks_without_checkpoint;
  const double scale = m_progress.lr_scale * m_train.nan_lr_scale;
  loadCheckpoint(*latest);
  m_loader->restart(m_progress.batches);
  m_progress.lr_scale = scale;
  emitWarning(std::string(core::warning_code::kRollback),
              "rolled back to checkpoints/step_" + std::to_string(*latest) +
                  " with the learning rate scaled by " + std::to_string(m_progress.lr_scale));
  m_consecutive_bad = 0;
}

// After an update: the interval's metric row, validation and checkpoints when due.
void TrainingLoop::afterStep(const Values& values) {
  const std::int64_t total = m_train.max_steps;
  if (m_budget_s > 0 && m_train.schedule == "cosine_budget" && m_progress.schedule_end == 0 &&
      m_progress.step >= m_train.warmup_steps) {
    if (m_fit_start.step < 0)
      m_fit_start = {m_progress.step, m_agreed.spent_s};
    else if (m_progress.step - m_fit_start.step >= kScheduleFitSteps)
      fitScheduleToBudget();
  }
  m_interval.means.add(values);
  ++m_interval.steps;
  if (m_rank0 && (m_progress.step % m_train.log_every == 0 || m_progress.step == total)) {
    const double seconds = std::max(secondsSince(m_interval.start), 1e-9);
    const double steps = m_interval.steps;
    const double it_per_s = steps / seconds;
    Values row = m_interval.means.take();
    row.emplace_back(std::string(core::metric::kTrainLr), rate(m_train.lr, m_progress.step));
    row.emplace_back(std::string(core::metric::kPerfItPerS), it_per_s);
    row.emplace_back(std::string(core::metric::kPerfStepS), seconds / steps);
    row.emplace_back(std::string(core::metric::kPerfDataWaitS), m_interval.data_wait / steps);
    row.emplace_back(std::string(core::metric::kPerfDataWaitFraction),
                     m_interval.data_wait / seconds);
    if (m_group) row.emplace_back(std::string(core::metric::kPerfCommS), m_interval.comm / steps);
    row.emplace_back(std::string(core::metric::kDataSkippedFiles),
                     static_cast<double>(m_dataset->skippedCount()));
    writeMetrics(std::move(row));
    m_events.emit(core::ProgressEvent{m_progress.step, total, it_per_s,
                                      (total - m_progress.step) / it_per_s});
    m_interval = Interval{};
    m_interval.start = Clock::now();
  }
  if (m_train.valid_every > 0 && m_progress.step % m_train.valid_every == 0) {
    // zero3: rank 0 validates alone, so it gathers the whole tokenizer first (with the EMA's
    // values when there is one) and frees it after.
    distributed::ParameterShards* shards =
        m_steps->parametersSharded() ? m_steps->shards() : nullptr;
    std::vector<torch::Tensor>& ema_shares = m_steps->emaShares();
    if (shards) shards->gatherOnRank(0, ema_shares.empty() ? nullptr : &ema_shares);
    onRankZero("valid", [&] { validate(); });
    if (shards) shards->release();
  }
  const bool periodic =
      m_train.checkpoint_every > 0 && m_progress.step % m_train.checkpoint_every == 0;
  if (periodic || m_agreed.checkpoint_now) {
    m_progress.elapsed_s += secondsSince(m_session_start);
    saveCheckpoint();
    m_rollbacks_without_checkpoint = 0;
    m_progress.elapsed_s -= secondsSince(m_session_start);
  }
}

}  // namespace tb::trainer
