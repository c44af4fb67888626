// One class: the training loop, from opening the run directory to its last checkpoint (its
// setup, steps and outputs share every member; runTraining in training_run.cpp starts it).
#include "trainer/training/training_loop.h"

#include "core/atomic_file.h"
#include "core/checkpoint_files.h"
#include "core/config_io.h"
#include "core/metric_names.h"
#include "core/metrics_log.h"
#include "core/run_lock.h"
#include "trainer/baseline/reference_fit.h"
#include "trainer/data/clip_loader.h"
#include "trainer/distributed/gradient_reducer.h"
#include "trainer/distributed/parameter_shards.h"
#include "trainer/distributed/rank_group.h"
#include "trainer/media/frame_tensors.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_encoder.h"
#endif
#include "trainer/evaluation/clip_scores.h"
#include "trainer/evaluation/lpips.h"
#include "trainer/evaluation/validator.h"
#include "trainer/models/discriminator.h"
#include "trainer/models/tokenizer.h"
#include "trainer/outputs/tensorboard_writer.h"
#include "trainer/outputs/validation_outputs.h"
#include "trainer/run_log.h"
#include "trainer/runtime_info.h"
#include "trainer/torch_compat.h"
#include "trainer/training/checkpoint_store.h"
#include "trainer/training/data_init.h"
#include "trainer/training/flat_shard_adamw.h"
#include "trainer/training/gan_losses.h"
#include "trainer/training/lr_schedule.h"
#include "trainer/training/sharded_adamw.h"
#include "trainer/training/sharded_checkpoint.h"
#include "trainer/training/training_step.h"
#include "trainer/training_device.h"
#include "trainer/weights/state_dict_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <unistd.h>

namespace tb::trainer {

namespace {

namespace fs = std::filesystem;

// A write refused because its file system is full (or the user's quota is spent). Every writer
// puts the errno text (strerror) in its message; std::filesystem's errors carry the code.
bool isDiskFull(const std::exception& e) {
  if (const auto* s = dynamic_cast<const std::system_error*>(&e)) {
    if (s->code() == std::errc::no_space_on_device || s->code().value() == EDQUOT) return true;
  }
  const std::string what = e.what();
  return what.find(std::strerror(ENOSPC)) != std::string::npos ||
         what.find(std::strerror(EDQUOT)) != std::string::npos;
}

std::uintmax_t folderBytes(const fs::path& folder) {
  std::uintmax_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(folder, ec)) {
    if (entry.is_regular_file(ec)) bytes += entry.file_size(ec);
  }
  return bytes;
}

std::int64_t tensorBytes(const NamedTensors& tensors, bool trainable_only) {
  std::int64_t bytes = 0;
  for (const auto& [name, t] : tensors) {
    if (!trainable_only || t.requires_grad())
      bytes += t.numel() * static_cast<std::int64_t>(t.element_size());
  }
  return bytes;
}

std::string megabytes(std::uintmax_t bytes) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << static_cast<double>(bytes) / 1e6 << " MB";
  return s.str();
}

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
        std::to_string(m_progress.step) + " to " + std::to_string(total) +
        (m_budget_s > 0
             ? " or the time budget of " + seconds(m_budget_s) + ", whichever comes first"
             : std::string()));
  m_log("precision " +
        (m_steps->reducedPrecision() || m_train.precision != core::Precision::Auto
             ? describePrecision(m_train.precision, m_device)
             : std::string("fp32 (auto: a convolution was wrong in bf16)")) +
        " (train.precision " + core::choiceName(m_train.precision) + ")");
  if (m_progress.step < total) {
    emitPhase("first_steps",
              m_train.log_every > 1 && m_progress.step + 1 < total
                  ? "training; the first figures come at step " +
                        std::to_string(std::min(
                            total, (m_progress.step / m_train.log_every + 1) * m_train.log_every)) +
                        " (train.log_every " + std::to_string(m_train.log_every) + ")"
                  : "training the first step");
  }
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
      // The run ends here: its progress says so, not "step 17 of 20,000".
      m_events.emit(core::ProgressEvent{m_progress.step, m_progress.step, m_last_it_per_s, 0.0});
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
  if (m_budget_s > 0 && m_train.schedule == core::Schedule::CosineBudget &&
      m_progress.schedule_end == 0 && m_progress.step >= m_train.warmup_steps) {
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
    const ExpectedEnd end = expectedEnd(m_train, m_progress.step, it_per_s, m_agreed.spent_s,
                                        m_budget_s, m_progress.schedule_end);
    m_events.emit(core::ProgressEvent{m_progress.step, end.step, it_per_s, end.eta_s});
    m_last_it_per_s = it_per_s;
    m_interval = Interval{};
    m_interval.start = Clock::now();
  }
  // zero3: rank 0 validates and evaluates alone, so it gathers the whole tokenizer first (with
  // the EMA's values when there is one) and frees it after.
  const auto onRankZeroWithWholeTokenizer = [&](const std::string& tag, auto&& work) {
    distributed::ParameterShards* shards =
        m_steps->parametersSharded() ? m_steps->shards() : nullptr;
    std::vector<torch::Tensor>& ema_shares = m_steps->emaShares();
    if (shards) shards->gatherOnRank(0, ema_shares.empty() ? nullptr : &ema_shares);
    onRankZero(tag, work);
    if (shards) shards->release();
  };
  if (m_train.valid_every > 0 && m_progress.step % m_train.valid_every == 0)
    onRankZeroWithWholeTokenizer("valid", [&] { validate(); });
  if (m_config.eval.every_steps > 0 && m_progress.step % m_config.eval.every_steps == 0)
    onRankZeroWithWholeTokenizer("eval", [&] { evaluateFrechet(); });
  const bool periodic =
      m_train.checkpoint_every > 0 && m_progress.step % m_train.checkpoint_every == 0;
  if (periodic || m_agreed.checkpoint_now) {
    m_progress.elapsed_s += secondsSince(m_session_start);
    saveCheckpoint();
    m_rollbacks_without_checkpoint = 0;
    m_progress.elapsed_s -= secondsSince(m_session_start);
  }
}

void TrainingLoop::checkUnsupported() {
  if (m_group && m_config.distributed.strategy == core::Strategy::None) {
    throw TrainingError("config_invalid",
                        "distributed.strategy is \"none\" but " +
                            std::to_string(m_group->worldSize()) + " processes were started (" +
                            m_group->launch().launcher + ")",
                        "set distributed.strategy to \"ddp\", \"zero1\", \"zero2\" or \"zero3\"");
  }
}

void TrainingLoop::emitPhase(const std::string& phase, const std::string& text, std::int64_t done,
                             std::int64_t total) {
  const auto now = Clock::now();
  const bool edge = done == 0 || done >= total || text != m_last_phase.text;
  if (!edge && now - m_last_phase.at < std::chrono::milliseconds(500)) return;
  m_last_phase = {text, now};
  m_events.emit(core::PhaseEvent{phase, text, done, total});
}

void TrainingLoop::setUp() {
  emitPhase("model", "building the model");
  torch::manual_seed(static_cast<std::uint64_t>(m_train.seed));
  m_steps = std::make_unique<TrainingStep>(
      m_config, TrainingStepSetup{m_group, MissingPerceptualWeights::Warn,
                                  [this](const std::string& code, const std::string& message) {
                                    emitWarning(code, message);
                                  },
                                  m_device});
  checkAutoPrecision();
  m_tokenizer = m_steps->tokenizer();
  m_optimizer = m_steps->optimizer();
  m_lpips = m_steps->lpips();
  m_discr = m_steps->discriminator();
  m_discr_optimizer = m_steps->discriminatorOptimizer();
  if (m_group) {
    distributed::RankGroup* group = m_group;
    m_tokenizer->quantizer()->setBatchMeanReducer(
        [group](const torch::Tensor& t) { return distributed::averageOverRanks(t, *group); });
  }
  if (m_discr) {
    m_log(std::string("discriminator (") + core::choiceName(m_config.model.discriminator.type) +
          "): " + std::to_string(countParameters(*m_discr)) + " parameters, from step " +
          std::to_string(m_config.loss.discr_start_step));
  }

  // Rank 0 indexes the data folder first; the others then read its cached index.
  emitPhase("data", m_config.data.type == core::DataType::Synthetic
                        ? std::string("preparing the procedural clips")
                        : "indexing " + m_config.data.path + " (reading every file's header)");
  auto openData = [&] {
    m_dataset = std::make_unique<data::ClipDataset>(
        m_config.data, static_cast<std::uint64_t>(m_train.seed), m_run.root() / "data_index.json",
        std::max(1, m_config.data.workers));
  };
  onRankZero("data", openData);
  if (!m_rank0) openData();
  m_log("data: " + m_dataset->describe());
  reportDataSkips(m_dataset->indexSkips());
  if (m_dataset->validSize() == 0 && m_config.data.type != core::DataType::Synthetic &&
      (m_train.valid_every > 0 || m_config.eval.every_steps > 0)) {
    emitWarning(std::string(core::warning_code::kNoValidation),
                m_config.data.valid_path.empty()
                    ? "no validation clips: validation takes whole files of data.path, and " +
                          std::to_string(m_dataset->trainSize()) +
                          " usable file(s) leave none for it; validation, sample GIFs and "
                          "rFID/rFVD are off (set data.valid_path, or add files)"
                    : "no validation clips in data.valid_path " + m_config.data.valid_path +
                          "; validation, sample GIFs and rFID/rFVD are off");
  }
  if (m_config.eval.every_steps > 0 && m_rank0) {
    m_frechet = std::make_unique<FrechetEvaluation>(m_config.eval, m_device, m_run.root() / "eval");
  }
  m_loader = std::make_unique<data::ClipLoader>(
      *m_dataset, m_train.batch_size, m_config.data.workers, m_config.data.prefetch,
      m_group ? m_group->rank() : 0, m_group ? m_group->worldSize() : 1, m_device.is_cuda());
}

// train.precision "auto" chose bf16: each convolution of a generator step at the training shape
// is checked in bf16 against fp32 first; a wrong one makes it fp32, said as a warning.
void TrainingLoop::checkAutoPrecision() {
  if (m_train.precision != core::Precision::Auto || !m_steps->reducedPrecision()) return;
  const std::string text =
      "checking this model's convolutions in bf16 against fp32 "
      "(train.precision auto)";
  emitPhase("precision", text);
  const auto& d = m_config.data;
  const std::int64_t frames = d.train_frames > 0 ? d.train_frames : d.num_frames;
  const std::int64_t size = d.train_crop > 0 ? d.train_crop : d.image_size;
  const torch::Tensor x =
      (torch::rand({m_train.batch_size, m_config.model.channels, frames, size, size}) * 2 - 1)
          .to(m_device);
  const auto start = Clock::now();
  const std::string wrong = m_steps->checkAutoPrecision(
      x, [&](int done, int total) { emitPhase("precision", text, done, total); });
  if (wrong.empty()) {
    m_log("train.precision auto: every convolution agrees with fp32 in bf16 (checked in " +
          seconds(std::chrono::duration<double>(Clock::now() - start).count()) +
          "); training in bf16");
    return;
  }
  emitWarning(std::string(core::warning_code::kPrecisionFallback),
              "train.precision auto: training in fp32, not bf16: this machine computes a "
              "convolution of the model wrongly in bf16: " +
                  wrong);
}

// One warning per skipped file (the first 20; then one that counts the rest), each naming the
// file and the reason.
void TrainingLoop::reportDataSkips(const std::vector<data::SkippedFile>& skips) {
  constexpr std::size_t kNamed = 20;
  for (std::size_t i = 0; i < skips.size() && i < kNamed; ++i) {
    emitWarning(std::string(core::warning_code::kDataSkipped),
                "skipping " + (fs::path(m_config.data.path) / skips[i].path).string() + ": " +
                    skips[i].reason);
  }
  if (skips.size() > kNamed) {
    emitWarning(std::string(core::warning_code::kDataSkipped),
                std::to_string(skips.size() - kNamed) + " more files skipped (see " +
                    (m_run.root() / "data_index.json").string() + ")");
  }
}

// rFID / rFVD on the first eval.clips validation picks, with the weights validation uses.
void TrainingLoop::evaluateFrechet() {
  if (m_dataset->validSize() == 0 || !m_frechet) return;
  const EmaWeightsInUse ema(*m_tokenizer, m_ema);
  const std::vector<std::int64_t> picks = m_dataset->validPicks(m_config.eval.clips);
  std::string key = std::to_string(m_config.data.image_size) + "x" +
                    std::to_string(m_config.data.num_frames) + ":";
  for (const std::int64_t i : picks) key += std::to_string(i) + ",";
  const auto start = Clock::now();
  writeMetrics(m_frechet->score(
      *m_tokenizer, static_cast<std::int64_t>(picks.size()),
      [&](std::int64_t k) { return m_dataset->validSample(picks[static_cast<std::size_t>(k)]); },
      key));
  m_log("eval: rFID/rFVD of " + std::to_string(picks.size()) + " held-out clips in " +
        seconds(secondsSince(start)));
}

void TrainingLoop::validate() {
  if (m_dataset->validSize() == 0) return;
  const EmaWeightsInUse ema(*m_tokenizer,
                            m_ema);  // validation uses the EMA weights when there are any
  Validator validator(*m_tokenizer, m_lpips, m_config.loss.recon);
  std::vector<torch::Tensor> sample_rows;  // original | reconstruction, the first four picks
  for (const std::int64_t i : m_dataset->validPicks(m_train.valid_clips)) {
    const torch::Tensor clip = m_dataset->validSample(i);
    const ClipValidation v = validator.score(clip, m_device);
    if (sample_rows.size() < 4) sample_rows.push_back(outputs::sampleRow(clip, v.recon));
  }
  writeMetrics(validator.summary().metricValues());
  // codebook/step_<N>.safetensors: how often validation used each code (the window's histogram).
  const fs::path counts = m_run.codebookFile(m_progress.step);
  try {
    outputs::writeCodebookCounts(counts, m_progress.step, validator.summary().code_counts);
  } catch (const std::exception& e) {
    emitWarning(std::string(core::warning_code::kCodebookCountsFailed),
                counts.string() + ": " + e.what());
  }
  writeSample(torch::cat(sample_rows, 2));
}

// reference/: the classic VQ codec at this tokenizer's grid and bits, fitted on the training
// clips and scored on the validation clips as validate() scores the tokenizer. A failure costs
// the reference line only, never the run. It is fitted on the CPU whatever train.device says: it
// runs once per run, its k-means++ seeding reads distances on the host, and a CPU fit gives the
// same codec for a seed on every machine, so references of runs on different devices compare.
void TrainingLoop::fitReference() {
  try {
    baseline::ReferenceFitOptions options;
    options.seed = static_cast<std::uint64_t>(m_train.seed);
    options.valid_clips = m_train.valid_clips;
    // A quarter of `baseline`'s default: seconds before the first step, within 0.1 dB of it
    // (quick-start held out: 27.17 against 27.21 dB).
    options.blocks = std::int64_t{1} << 18;
    const baseline::ReferenceFit fit = baseline::fitReferenceCodec(
        m_config, *m_dataset, options, [this](const std::string& text) { m_log(text); },
        [this](const std::string& stage, std::int64_t done, std::int64_t total) {
          emitPhase("reference", "classic VQ reference (train.reference_codec): " + stage, done,
                    total);
        });
    baseline::writeReferenceFolder(fit, m_config, m_run.referenceDir());
    m_log(fit.info.name + " in " + std::to_string(fit.info.fit_seconds) + " s" +
          (fit.info.valid_psnr ? ": held-out PSNR " + std::to_string(*fit.info.valid_psnr) +
                                     " dB, SSIM " + std::to_string(*fit.info.valid_ssim)
                               : std::string()) +
          " (reference/)");
  } catch (const std::exception& e) {
    emitWarning(std::string(core::warning_code::kReferenceCodecFailed),
                std::string("no classic VQ reference: ") + e.what());
  }
}

// samples/step_<N>.gif: validation clips stacked top to bottom, each original | reconstruction;
// also added to TensorBoard as an (animated) image.
void TrainingLoop::writeSample(const torch::Tensor& grid) {
#if TB_WITH_FFMPEG
  const fs::path file = m_run.samplesDir() / ("step_" + std::to_string(m_progress.step) + ".gif");
  try {
    int width = 0, height = 0;
    const std::vector<std::uint8_t> gif = outputs::writeSampleGif(file, grid, &width, &height);
    m_events.emit(core::SampleEvent{m_progress.step, "reconstruction",
                                    fs::relative(file, m_run.root()).string()});
    if (m_tensorboard)
      m_tensorboard->addImage(std::string(core::metric::kValidSamples), m_progress.step, width,
                              height, 3, gif);
  } catch (const std::exception& e) {
    emitWarning(std::string(core::warning_code::kSampleFailed), file.string() + ": " + e.what());
  }
#else
  (void)grid;
#endif
}

// Collective: under zero1 every rank hands its optimizer shard to rank 0, which writes one
// checkpoint that loads at any world size; the other ranks wait until it is complete. Under
// zero2 and zero3 every rank takes part in gathering the sharded files' tensors, one unit at a
// time, while rank 0 writes them.
void TrainingLoop::saveCheckpoint() {
  NamedTensors optimizer_state, discr_optimizer_state;
  if (m_optimizer) optimizer_state = m_optimizer->state(m_group);
  if (m_discr_optimizer) discr_optimizer_state = m_discr_optimizer->state(m_group);
  if (m_steps->shards() && !m_rank0) CheckpointStore::writeFiles(nullptr, state(), {}, {});
  onRankZero("checkpoint", [&] { writeCheckpoint(optimizer_state, discr_optimizer_state); });
  m_last_checkpoint = m_progress.step;
}

void TrainingLoop::writeCheckpoint(const NamedTensors& optimizer_state,
                                   const NamedTensors& discr_optimizer_state) {
  const fs::path folder = m_store.write(m_progress.step, [&](const fs::path& dir) {
    CheckpointStore::writeFiles(&dir, state(), optimizer_state, discr_optimizer_state);
  });
  const std::string rel = fs::relative(folder, m_run.root()).string();
  m_events.emit(core::CheckpointEvent{m_progress.step, rel});
  m_log("checkpoint " + rel);
  for (auto s : m_store.applyRetention(m_train.checkpoint_total_limit, m_train.checkpoint_keep)) {
    m_log("retention: deleted checkpoints/step_" + std::to_string(s));
  }
}

void TrainingLoop::loadCheckpoint(std::int64_t step) {
  TrainingState restored = state();
  m_store.load(step, restored, [this](const std::string& text) { m_log(text); });
  m_last_checkpoint = m_progress.step;
}

// train.init_checkpoint: a new run starts from another checkpoint's weights (fine-tuning, an
// imported magvit2-pytorch tokenizer); its step, optimiser state and RNG stay those of a new run.
void TrainingLoop::loadInitialWeights() {
  const std::string& source = m_train.init_checkpoint;
  try {
    const fs::path dir = resolveCheckpointFolder(source);
    // Weights trained on [0, 1] frames fed [-1, 1] ones would train on, silently wrong.
    const core::ConfigLoad theirs = core::loadRunConfig(dir / core::checkpoint_files::kConfig);
    if (theirs.ok() && theirs.config.model.pixel_range != m_config.model.pixel_range)
      throw std::runtime_error(std::string("its model.pixel_range is ") +
                               core::choiceName(theirs.config.model.pixel_range) + ", this run's " +
                               core::choiceName(m_config.model.pixel_range));
    loadModelWeights(*m_tokenizer, m_steps->shards(), dir / core::checkpoint_files::kModel);
    if (m_discr && fs::exists(dir / core::checkpoint_files::kDiscriminator))
      loadModelWeights(*m_discr, m_steps->discriminatorShards(),
                       dir / core::checkpoint_files::kDiscriminator);
    m_log("weights from " + dir.string());
  } catch (const std::exception& e) {
    throw TrainingError("init_checkpoint_invalid",
                        "train.init_checkpoint " + source + ": " + e.what(),
                        "give a checkpoint folder whose config.json has this run's model section");
  }
}

// Rows logged after the checkpoint a run resumes from are replaced by the resumed run's own.
void TrainingLoop::truncateMetricsAfter(std::int64_t step) {
  const fs::path file = m_run.metricsFile();
  std::ifstream in(file);
  if (!in) return;
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    const auto row = core::parseMetricsLine(line);
    if (row && row->step <= step) kept += line + "\n";
  }
  in.close();
  core::writeFileAtomically(file, kept);
}

int TrainingLoop::run() {
  try {
    return runSteps();
  } catch (const TrainingError&) {
    throw;
  } catch (const std::exception& e) {
    if (isDiskFull(e)) throw diskFullError(e.what());
    throw;
  }
}

// The message names the file the disk refused; the hint says how much room the next checkpoint
// needs: the newest checkpoint's size, else the tensors a checkpoint holds (weights, EMA, both
// AdamW moments, the discriminator's likewise).
TrainingError TrainingLoop::diskFullError(const std::string& what) const {
  std::uintmax_t needed = 0;
  std::string basis;
  if (const auto latest = m_store.latest()) {
    needed = folderBytes(m_store.folder(*latest));
    basis = "the size of checkpoints/step_" + std::to_string(*latest);
  } else {
    const NamedTensors model = weights::stateDict(*m_tokenizer);
    std::int64_t bytes = tensorBytes(model, false) +
                         (m_train.ema ? 1 : 0) * tensorBytes(model, true) +
                         2 * tensorBytes(model, true);
    if (m_discr) {
      const NamedTensors discr = weights::stateDict(*m_discr);
      bytes += tensorBytes(discr, false) + 2 * tensorBytes(discr, true);
    }
    needed = static_cast<std::uintmax_t>(bytes);
    basis = "estimated from the model";
  }
  std::error_code ec;
  const fs::space_info space = fs::space(m_run.root(), ec);
  const std::string free_text = ec ? std::string("too little") : megabytes(space.available);
  return TrainingError(
      "disk_full", what,
      "the file system of " + m_run.root().string() + " is full (" + free_text +
          " free); the next checkpoint needs about " + megabytes(needed) + " (" + basis +
          "). Free space there, then resume with --resume: the run continues from its newest "
          "complete checkpoint");
}

// Rank 0 owns the run directory: the lock, the event file, config.json, metrics.
std::unique_ptr<core::RunLock> TrainingLoop::openRunDirectory() {
  // Checked again here (runTraining did before the log opened): a link planted meanwhile.
  if (const fs::path link = m_run.firstLinkedEntry(); !link.empty())
    throw TrainingError("run_dir_invalid", m_run.writeProblem(),
                        "remove the link, or choose a new --run-dir");
  try {
    m_run.create();
  } catch (const std::exception& e) {
    throw TrainingError("run_dir_unwritable", e.what(),
                        "choose a --run-dir on a writable file system");
  }
  std::unique_ptr<core::RunLock> lock;
  if (!m_rank0) return lock;
  try {
    lock = std::make_unique<core::RunLock>(m_run.lockFile());
  } catch (const core::RunLockedError& e) {
    throw TrainingError("run_dir_locked", e.what(),
                        "stop that trainer first, or use another --run-dir");
  } catch (const std::exception& e) {
    throw TrainingError("run_dir_unwritable", e.what(),
                        "choose a --run-dir on a writable file system");
  }
  if (!m_events.alsoAppendTo(m_run.eventsFile().string())) {
    m_log("warning: cannot append to " + m_run.eventsFile().string() +
          "; events go to the stream only");
  }
  return lock;
}

// The weights training starts from: the newest checkpoint (--resume), train.init_checkpoint, or
// the initialisation (scaled to the data with model.quantizer.data_init).
void TrainingLoop::restoreWeights() {
  bool resumed = false;
  if (m_options.resume) {
    if (auto latest = m_store.latest()) {
      emitPhase("resume", "loading checkpoints/step_" + std::to_string(*latest));
      loadCheckpoint(*latest);
      m_log("resumed from checkpoints/step_" + std::to_string(*latest));
      resumed = true;
    } else {
      m_log("no complete checkpoint to resume from: starting at step 0");
    }
  }
  if (!resumed && !m_train.init_checkpoint.empty()) {
    emitPhase("resume", "loading train.init_checkpoint " + m_train.init_checkpoint);
    loadInitialWeights();
  }
  if (m_progress.step == 0 && m_train.init_checkpoint.empty() &&
      m_config.model.quantizer.data_init) {
    // Loaded initial weights keep their own scale. The same first clips on every rank (samples
    // are functions of their position), so the ranks' tokenizers stay identical.
    std::vector<torch::Tensor> first;
    for (int i = 0; i < m_train.batch_size; ++i) first.push_back(m_dataset->trainSample(i));
    const std::int64_t tokens =
        initialiseQuantizerInput(*m_tokenizer, torch::stack(first).to(m_device));
    m_log(tokens > 0 ? "model.quantizer.data_init: quantizer input scaled on " +
                           std::to_string(tokens) + " tokens"
                     : "model.quantizer.data_init: this quantizer has no input projection; nothing "
                       "to initialise");
  }
  m_loader->restart(m_progress.batches);
}

// metrics.jsonl from the step training resumes at, config.json, TensorBoard, the reference.
void TrainingLoop::openOutputs() {
  if (m_rank0) {
    truncateMetricsAfter(m_progress.step);
    core::writeFileAtomically(m_run.configFile(),
                              core::toJsonText(m_config));  // the window reads it
    m_metrics = std::make_unique<core::MetricsWriter>(m_run.metricsFile());
    try {
      m_tensorboard = std::make_unique<outputs::TensorBoardWriter>(m_run.tensorboardDir());
    } catch (const std::exception& e) {
      emitWarning(std::string(core::warning_code::kTensorboardOff),
                  std::string("no TensorBoard events: ") + e.what());
    }
  }
  // After config.json: the run must be resumable even when the reference cannot be written.
  if (m_train.reference_codec && !fs::exists(m_run.referenceInfoFile())) {
    onRankZero("reference", [&] { fitReference(); });
  }
}

}  // namespace tb::trainer
