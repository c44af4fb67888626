#pragma once
// The training loop of one rank (internal to trainer/training): the steps themselves live in
// training_loop.cpp (micro-steps, the ranks' agreement, the update, non-finite steps, the
// metric rows, validation and checkpoints when due); setting a run up, validation, samples,
// checkpoints and the process around it in training_run.cpp.

#include "core/metrics_log.h"
#include "core/run_config.h"
#include "core/run_directory.h"
#include "core/run_lock.h"
#include "trainer/data/clip_loader.h"
#include "trainer/distributed/rank_group.h"
#include "trainer/evaluation/frechet_evaluation.h"
#include "trainer/evaluation/lpips.h"
#include "trainer/event_sink.h"
#include "trainer/models/discriminator.h"
#include "trainer/models/tokenizer.h"
#include "trainer/outputs/tensorboard_writer.h"
#include "trainer/run_log.h"
#include "trainer/training/checkpoint_store.h"
#include "trainer/training/interval_means.h"
#include "trainer/training/lr_schedule.h"
#include "trainer/training/sharded_adamw.h"
#include "trainer/training/training_run.h"
#include "trainer/training/training_step.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

inline double unixTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

using Values = std::vector<std::pair<std::string, double>>;

class TrainingLoop {
 public:
  TrainingLoop(const core::RunConfig& config, const core::RunDirectory& run,
               const TrainOptions& options, EventSink& events, RunControl& control,
               distributed::RankGroup* group, const torch::Device& device)
      : m_config(config),
        m_train(config.train),
        m_run(run),
        m_options(options),
        m_events(events),
        m_control(control),
        m_group(group),
        m_device(device),
        m_rank0(group == nullptr || group->rank() == 0),
        m_store(run),
        m_log(run.logsDir(), group ? group->rank() : 0, group != nullptr) {}

  /// Trains to the end; a write refused by a full disk becomes a `disk_full` error.
  int run();

 private:
  int runSteps();
  std::unique_ptr<core::RunLock> openRunDirectory();
  void restoreWeights();
  void openOutputs();
  std::optional<std::vector<std::pair<std::string, double>>> attemptStep();
  void agreeAcrossRanks(std::vector<std::pair<std::string, double>>& values);
  void recoverFromNonFiniteStep(std::int64_t next, const std::string& what);
  void afterStep(const std::vector<std::pair<std::string, double>>& values);
  void fitScheduleToBudget();
  double rate(double peak, std::int64_t step) const {
    return scheduledRate(m_train, peak, step, m_progress.schedule_end) * m_progress.lr_scale;
  }
  /// Training seconds of the run so far: the sessions before this one and this one.
  double spentSeconds() const { return m_progress.elapsed_s + secondsSince(m_session_start); }
  bool budgetSpent() const { return m_budget_s > 0 && spentSeconds() >= m_budget_s; }
  TrainingError diskFullError(const std::string& what) const;
  void setUp();
  void checkUnsupported();
  void checkAutoPrecision();
  void reportDataSkips(const std::vector<data::SkippedFile>& skips);
  bool ganActive() const { return m_discr && m_progress.step >= m_config.loss.discr_start_step; }
  void updateEma() { trainer::updateEma(m_ema, *m_tokenizer, m_train, m_progress.step); }
  void validate();
  void evaluateFrechet();
  void fitReference();
  void writeSample(const torch::Tensor& grid);
  void saveCheckpoint();
  void writeCheckpoint(const NamedTensors& optimizer_state,
                       const NamedTensors& discr_optimizer_state);
  TrainingState state() { return {*m_steps, m_ema, m_progress, m_config, m_device}; }
  void loadCheckpoint(std::int64_t step);
  void loadInitialWeights();
  void truncateMetricsAfter(std::int64_t step);
  // Work only rank 0 does (validation, checkpoint files, the data index): the others wait for it.
  template <class F>
  void onRankZero(const std::string& tag, F&& work) {
    if (m_rank0) work();
    if (!m_group) return;
    if (m_rank0) {
      m_group->arrive(tag);
    } else {
      m_group->awaitRankZero(tag);
    }
  }
  /// What the run does before its first progress event (core::PhaseEvent); a counted phase is
  /// reported at most twice a second, and always at its start and end.
  void emitPhase(const std::string& phase, const std::string& text, std::int64_t done = 0,
                 std::int64_t total = 0);
  void emitWarning(const std::string& code, const std::string& message) {
    m_log("warning: " + message);
    m_events.emit(core::WarningEvent{code, message, m_progress.step});
  }
  // One path per fact: metric rows go to metrics.jsonl (and TensorBoard) only, never to the event
  // stream, whose progress event is the live tick (emitted after the row, so that a reader woken
  // by it finds the row in the file).
  void writeMetrics(std::vector<std::pair<std::string, double>> values) {
    m_metrics->append(core::MetricsRow{m_progress.step, unixTime(), values});
    if (m_tensorboard) m_tensorboard->addScalars(m_progress.step, values);
  }

  const core::RunConfig& m_config;
  const core::TrainConfig& m_train;
  core::RunDirectory m_run;
  TrainOptions m_options;
  EventSink& m_events;
  RunControl& m_control;
  distributed::RankGroup* m_group;  // null on one process
  torch::Device m_device;           // where models, optimiser state, EMA and batches live
  bool m_rank0;
  CheckpointStore m_store;
  RunLog m_log;

  // The models, optimisers and the pieces of a step; the members below are views of its parts.
  std::unique_ptr<TrainingStep> m_steps;
  std::shared_ptr<Tokenizer> m_tokenizer;
  ShardedAdamW* m_optimizer = nullptr;     // null under zero2 and zero3 (m_steps->flatOptimizer())
  std::shared_ptr<Discriminator> m_discr;  // null when loss.adversarial_weight is 0
  ShardedAdamW* m_discr_optimizer = nullptr;
  metrics::Lpips m_lpips{nullptr};  // null when the perceptual loss is off
  std::unique_ptr<outputs::TensorBoardWriter> m_tensorboard;
  std::vector<std::pair<std::string, torch::Tensor>> m_ema;  // parameter name -> average
  std::unique_ptr<data::ClipDataset> m_dataset;
  std::unique_ptr<data::ClipLoader> m_loader;
  std::unique_ptr<core::MetricsWriter> m_metrics;
  std::unique_ptr<FrechetEvaluation> m_frechet;  // rank 0, with eval.every_steps > 0

  RunProgress m_progress;
  std::int64_t m_last_checkpoint = -1;

  // This session of the run (a resume starts a new one).
  Clock::time_point m_session_start;
  struct FitStart {  // where cosine_budget's fit began timing steps; step -1: not yet
    std::int64_t step = -1;
    double spent_s = 0;
  } m_fit_start;
  struct LastPhase {  // the last phase event sent, for emitPhase's pace
    std::string text;
    Clock::time_point at;
  } m_last_phase;
  double m_budget_s = 0;  // training seconds allowed, this session and earlier ones; 0: no limit
  double m_last_it_per_s = std::numeric_limits<double>::quiet_NaN();  // of the last progress event
  struct Interval {                                                   // since the last metric row
    IntervalMeans means;
    int steps = 0;
    double data_wait = 0, comm = 0;
    Clock::time_point start;
  } m_interval;
  int m_consecutive_bad = 0;  // non-finite steps in a row
  int m_rollbacks_without_checkpoint = 0;
  bool m_state_logged = false;
  struct Agreement {  // what the ranks agreed at the end of the previous step
    bool stop = false, checkpoint_now = false, budget_spent = false;
    double spent_s = 0;  // training seconds of the run so far (the ranks' mean)
  } m_agreed;
};

}  // namespace tb::trainer
