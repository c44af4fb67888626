#include "core/atomic_file.h"
#include "core/event_protocol.h"
#include "core/metric_names.h"
#include "core/metrics_log.h"
#include "core/run_directory.h"
#include "tests/trainer/test_support.h"
#include "trainer/event_sink.h"
#include "trainer/training/checkpoint_store.h"
#include "trainer/training/lr_schedule.h"
#include "trainer/training/training_run.h"
#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;

using testing::freshDir;

using testing::RunResult;
using testing::tinyConfig;
using testing::train;
using weights::NamedTensors;

std::vector<core::MetricsRow> trainRows(const fs::path& dir) {
  std::vector<core::MetricsRow> rows;
  std::ifstream in(dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto row = core::parseMetricsLine(line);
    if (row && !row->values.empty() && row->values.front().first == "train/recon_loss")
      rows.push_back(*row);
  }
  return rows;
}

std::string fileBytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(LrSchedule, WarmupReachesTheRateExactlyAtWarmupSteps) {
  core::TrainConfig t;
  t.warmup_steps = 100;
  t.max_steps = 1100;
  EXPECT_DOUBLE_EQ(scheduledRate(t, 1e-3, 1), 1e-5);
  EXPECT_DOUBLE_EQ(scheduledRate(t, 1e-3, 50), 5e-4);
  EXPECT_DOUBLE_EQ(scheduledRate(t, 1e-3, 99), 9.9e-4);
  EXPECT_DOUBLE_EQ(scheduledRate(t, 1e-3, 100), 1e-3);
  EXPECT_DOUBLE_EQ(scheduledRate(t, 1e-3, 5000), 1e-3);  // constant afterwards
  t.schedule = core::Schedule::Cosine;
  t.min_lr_ratio = 0.1;
  EXPECT_DOUBLE_EQ(scheduledRate(t, 1e-3, 100), 1e-3);
  EXPECT_NEAR(scheduledRate(t, 1e-3, 600), 0.55e-3, 1e-12);  // half way: mean of peak and floor
  EXPECT_NEAR(scheduledRate(t, 1e-3, 1100), 1e-4, 1e-12);
  // A time budget's end replaces max_steps as the cosine's last step.
  EXPECT_NEAR(scheduledRate(t, 1e-3, 350, 600), 0.55e-3, 1e-12);
  EXPECT_NEAR(scheduledRate(t, 1e-3, 600, 600), 1e-4, 1e-12);
  EXPECT_NEAR(scheduledRate(t, 1e-3, 900, 600), 1e-4, 1e-12);  // the floor after it
  t.schedule =
      core::Schedule::CosineBudget;  // the same cosine; only the training loop sets its end
  EXPECT_NEAR(scheduledRate(t, 1e-3, 600), 0.55e-3, 1e-12);
  EXPECT_NEAR(scheduledRate(t, 1e-3, 350, 600), 0.55e-3, 1e-12);
  t.schedule = core::Schedule::Constant;
  t.warmup_steps = 0;
  EXPECT_DOUBLE_EQ(scheduledRate(t, 1e-3, 1), 1e-3);
}

TEST(LrSchedule, TimeBudgetEndIsWhereTheMeasuredSpeedRunsOutOfBudget) {
  core::TrainConfig t;
  t.max_steps = 1100;
  // Step 100 after 10 of 60 s at 0.1 s a step: 500 steps left.
  EXPECT_EQ(scheduleEndForBudget(t, 100, 10, 60, 0.1), 600);
  EXPECT_EQ(scheduleEndForBudget(t, 100, 10, 60, 0.03), 1100);  // never past max_steps
  EXPECT_EQ(scheduleEndForBudget(t, 100, 70, 60, 0.1), 101);    // budget spent: the next step
  EXPECT_EQ(scheduleEndForBudget(t, 100, 10, 10.05, 0.1), 101);
}

TEST(LrSchedule, ProgressFollowsTheTimeBudgetWhenItEndsTheRunFirst) {
  core::TrainConfig t;
  t.max_steps = 20000;
  // No budget: max_steps at this speed.
  auto end = expectedEnd(t, 10, 2.0, 5, 0, 0);
  EXPECT_EQ(end.step, 20000);
  EXPECT_DOUBLE_EQ(end.eta_s, 19990 / 2.0);
  // 120 s budget, 5 s spent, 2 steps a second: 115 s and 230 steps to go, not 20,000.
  end = expectedEnd(t, 10, 2.0, 5, 120, 0);
  EXPECT_EQ(end.step, 240);
  EXPECT_DOUBLE_EQ(end.eta_s, 115);
  // Once the cosine's end is fitted, that is the end.
  end = expectedEnd(t, 150, 2.0, 70, 120, 251);
  EXPECT_EQ(end.step, 251);
  EXPECT_DOUBLE_EQ(end.eta_s, 50);
  // Past the fitted end (the estimate was short), the speed estimates it again.
  end = expectedEnd(t, 260, 2.0, 110, 120, 251);
  EXPECT_EQ(end.step, 280);
  EXPECT_DOUBLE_EQ(end.eta_s, 10);
  // A budget that max_steps comes before changes nothing.
  end = expectedEnd(t, 19990, 2.0, 5, 120, 0);
  EXPECT_EQ(end.step, 20000);
  EXPECT_DOUBLE_EQ(end.eta_s, 5);
  // Spent: the end is now.
  end = expectedEnd(t, 300, 2.0, 130, 120, 0);
  EXPECT_EQ(end.step, 301);
  EXPECT_DOUBLE_EQ(end.eta_s, 0);
}

// With a time budget, train.schedule "cosine_budget" decays over the budget, not over max_steps:
// its end is fixed once from kScheduleFitSteps steps timed after warmup (here from the end of step
// 1), stored in the checkpoints, and a resume (here with another budget) keeps it.
TEST(Training, CosineScheduleEndsWithTheTimeBudgetAndResumeKeepsItsEnd) {
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 1000000;
  config.train.warmup_steps = 0;
  config.train.schedule = core::Schedule::CosineBudget;
  config.train.min_lr_ratio = 0.1;
  config.train.log_every = 1;
  config.train.valid_every = 0;
  config.train.sample_every = 0;
  config.train.checkpoint_every = 0;
  config.train.time_budget_s = 4;
  const fs::path dir = freshDir("budget_cosine");
  const RunResult first = train(config, dir);
  ASSERT_EQ(first.code, 0);
  auto stateOf = [&](const fs::path& run) {
    const auto latest = CheckpointStore(core::RunDirectory(run)).latest();
    EXPECT_TRUE(latest.has_value());
    std::ifstream in(run / "checkpoints" / ("step_" + std::to_string(latest.value_or(0))) /
                     "state.json");
    return nlohmann::json::parse(in);
  };
  const auto state = stateOf(dir);
  const std::int64_t last = state.at("step").get<std::int64_t>();
  const std::int64_t fitted_at = 1 + kScheduleFitSteps;
  if (last <= fitted_at)
    GTEST_SKIP() << "only " << last << " steps in 4 s: too slow to fit the schedule";
  const std::int64_t end = state.at("schedule_end").get<std::int64_t>();
  EXPECT_GT(end, fitted_at);
  EXPECT_LT(end, config.train.max_steps);
  // The logged rate: the cosine towards max_steps until the end was fixed, then towards `end`.
  std::int64_t checked = 0;
  for (const auto& row : trainRows(dir)) {
    for (const auto& [name, v] : row.values) {
      if (name != core::metric::kTrainLr) continue;
      const double want =
          scheduledRate(config.train, config.train.lr, row.step, row.step < fitted_at ? 0 : end);
      EXPECT_NEAR(v, want, 1e-12) << "step " << row.step;
      ++checked;
    }
  }
  EXPECT_EQ(checked, last);
  EXPECT_LT(scheduledRate(config.train, config.train.lr, last, end), config.train.lr);

  // Progress followed the budget: no event promised the million steps of max_steps once the
  // speed was known, and the last one, before done, says the run ended where it did.
  std::vector<core::ProgressEvent> progress;
  for (const std::string& line : first.events) {
    const core::DecodeResult decoded = core::decodeEventLine(line);
    if (const auto* p = decoded.ok() ? std::get_if<core::ProgressEvent>(decoded.event()) : nullptr)
      progress.push_back(*p);
  }
  ASSERT_GE(progress.size(), 2u);
  for (const auto& p : progress) {
    EXPECT_LT(p.total, config.train.max_steps) << "step " << p.step;
    EXPECT_LE(p.eta_s, config.train.time_budget_s) << "step " << p.step;
  }
  EXPECT_EQ(progress.back().step, last);
  EXPECT_EQ(progress.back().total, last);
  EXPECT_EQ(progress.back().eta_s, 0);

  config.train.time_budget_s = 6;  // about two seconds more, another speed: the end stays
  ASSERT_EQ(train(config, dir, /*resume=*/true).code, 0);
  const auto resumed = stateOf(dir);
  EXPECT_GT(resumed.at("step").get<std::int64_t>(), last);
  EXPECT_EQ(resumed.at("schedule_end").get<std::int64_t>(), end);
  fs::remove_all(dir);

  // Plain cosine ends at max_steps whatever the budget: a budget only stops it.
  config.train.schedule = core::Schedule::Cosine;
  config.train.time_budget_s = 1;
  ASSERT_EQ(train(config, dir).code, 0);
  EXPECT_EQ(stateOf(dir).at("schedule_end").get<std::int64_t>(), 0);
  fs::remove_all(dir);
}

TEST(Training, ReconstructionLossFallsOnProceduralClips) {
  const fs::path dir = freshDir("falls");
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 150;
  const RunResult r = train(config, dir);
  ASSERT_EQ(r.code, 0);
  ASSERT_FALSE(r.events.empty());
  EXPECT_NE(r.events.front().find("\"type\":\"hello\""), std::string::npos);
  EXPECT_NE(r.events.back().find("\"type\":\"done\",\"status\":\"completed\",\"step\":150"),
            std::string::npos)
      << r.events.back();
  const auto rows = trainRows(dir);
  ASSERT_EQ(rows.size(), 150u);
  double first = 0, last = 0;
  for (std::size_t i = 0; i < 5; ++i) first += rows[i].values.front().second / 5;
  for (std::size_t i = 0; i < 10; ++i) last += rows[rows.size() - 1 - i].values.front().second / 10;
  // The stated fraction: the mean L1 reconstruction loss of the last 10 of 150 steps is below
  // 75% of the mean of the first 5 (measured here: 0.48 -> 0.32, 67%).
  EXPECT_LT(last, 0.75 * first) << "first " << first << " last " << last;
  EXPECT_TRUE(fs::exists(dir / "checkpoints" / "step_150" / "COMPLETE"));
  EXPECT_TRUE(fs::exists(dir / "checkpoints" / "step_150" / "model.safetensors"));
  EXPECT_TRUE(fs::exists(dir / "config.json"));
  fs::remove_all(dir);
}

TEST(Training, StopAndResumeIsBitIdenticalToAnUninterruptedRun) {
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 16;
  config.train.checkpoint_every = 8;
  const fs::path straight = freshDir("straight");
  ASSERT_EQ(train(config, straight).code, 0);

  const fs::path split = freshDir("split");
  core::RunConfig first_half = config;
  first_half.train.max_steps = 8;
  ASSERT_EQ(train(first_half, split).code, 0);
  ASSERT_EQ(train(config, split, /*resume=*/true).code, 0);

  const std::string a = fileBytes(straight / "checkpoints" / "step_16" / "model.safetensors");
  const std::string b = fileBytes(split / "checkpoints" / "step_16" / "model.safetensors");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "parameters differ after resume";
  EXPECT_EQ(fileBytes(straight / "checkpoints" / "step_16" / "ema.safetensors"),
            fileBytes(split / "checkpoints" / "step_16" / "ema.safetensors"));
  const auto ra = trainRows(straight);
  const auto rb = trainRows(split);
  ASSERT_EQ(ra.size(), 16u);
  ASSERT_EQ(rb.size(), 16u);
  for (std::size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].step, rb[i].step);
    EXPECT_EQ(ra[i].values.front().second, rb[i].values.front().second) << "step " << ra[i].step;
  }
  fs::remove_all(straight);
  fs::remove_all(split);
}

// Before its first figures a run said nothing but "running" for as long as indexing, building
// and fitting the reference took (100 s on five videos): every phase is an event, the counted
// ones with their share, all before the first progress event.
TEST(Training, EveryPhaseBeforeTheFirstStepIsAnEvent) {
  const fs::path dir = freshDir("phases");
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 4;
  config.train.log_every = 2;
  config.train.reference_codec = true;
  const RunResult r = train(config, dir);
  ASSERT_EQ(r.code, 0) << (r.events.empty() ? "" : r.events.back());
  std::vector<core::PhaseEvent> phases;
  bool progressed = false;
  for (const std::string& line : r.events) {
    const core::DecodeResult decoded = core::decodeEventLine(line);
    ASSERT_TRUE(decoded.ok()) << line;
    if (std::holds_alternative<core::ProgressEvent>(*decoded.event())) progressed = true;
    if (const auto* p = std::get_if<core::PhaseEvent>(decoded.event())) {
      EXPECT_FALSE(progressed) << "a phase after the first progress event: " << line;
      EXPECT_GE(p->done, 0) << line;
      EXPECT_TRUE(p->total == 0 || p->done <= p->total) << line;
      phases.push_back(*p);
    }
  }
  std::vector<std::string> names;
  for (const auto& p : phases) {
    if (names.empty() || names.back() != p.phase) names.push_back(p.phase);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"model", "data", "reference", "first_steps"}));
  const bool counted = std::any_of(phases.begin(), phases.end(), [](const core::PhaseEvent& p) {
    return p.phase == "reference" && p.total > 0 &&
           p.text.find("drawing blocks") != std::string::npos;
  });
  EXPECT_TRUE(counted) << "the reference fit's drawing is counted";
  ASSERT_FALSE(phases.empty());
  EXPECT_NE(phases.back().text.find("first figures come at step 2"), std::string::npos)
      << phases.back().text;
  fs::remove_all(dir);
}

// One path per fact: a metric row goes to metrics.jsonl (and TensorBoard), never to the event
// stream or events.jsonl, whose progress events are the live tick.
TEST(Training, MetricRowsGoToMetricsJsonlOnlyNotToTheEvents) {
  const fs::path dir = freshDir("one_path");
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 4;
  config.train.log_every = 2;
  config.train.valid_every = 4;
  config.train.valid_clips = 1;
  const RunResult r = train(config, dir);
  ASSERT_EQ(r.code, 0) << (r.events.empty() ? "" : r.events.back());

  std::vector<std::string> written;  // events.jsonl, line by line
  std::ifstream in(core::RunDirectory(dir).eventsFile());
  for (std::string line; std::getline(in, line);) written.push_back(line);
  EXPECT_EQ(written, r.events) << "events.jsonl holds what the stream said";
  std::vector<std::int64_t> progress;
  for (const std::string& line : written) {
    const core::DecodeResult decoded = core::decodeEventLine(line);
    ASSERT_TRUE(decoded.ok()) << line;
    EXPECT_FALSE(std::holds_alternative<core::MetricEvent>(*decoded.event())) << line;
    if (const auto* p = std::get_if<core::ProgressEvent>(decoded.event()))
      progress.push_back(p->step);
  }
  EXPECT_EQ(progress, (std::vector<std::int64_t>{2, 4}));

  std::vector<std::int64_t> train_steps;
  bool validation = false;
  for (const core::MetricsRow& row :
       core::MetricsFollower(core::RunDirectory(dir).metricsFile()).poll()) {
    for (const auto& [name, value] : row.values) {
      if (name == core::metric::kTrainLoss) train_steps.push_back(row.step);
      validation =
          validation || (name == core::metric::kValidPsnr && row.step == 4 && std::isfinite(value));
    }
  }
  EXPECT_EQ(train_steps, (std::vector<std::int64_t>{2, 4}));
  EXPECT_TRUE(validation) << "no valid/psnr row at step 4";
  fs::remove_all(dir);
}

// The error event of a run that failed, or "" when there is none.
using testing::errorEventOf;

// A resume that loads the weights but quietly starts the optimizer or the RNG afresh is not
// the run it continues: every tensor it expects must be there with its dtype and shape.
TEST(Training, CheckpointsFromBeforeStateVersion2StillResume) {
  // Tokenbench 0.1 wrote the AdamW state of updated parameters only (no ".step" for the others,
  // no state_version): such checkpoints resume, a parameter without entries never updated.
  // A discriminator that has not started: no updates.
  core::RunConfig config = testing::withTinyGan(tinyConfig(), 100);
  config.train.max_steps = 2;
  config.train.checkpoint_every = 2;
  const fs::path dir = freshDir("state_v1");
  ASSERT_EQ(train(config, dir).code, 0);
  const fs::path step = dir / "checkpoints" / "step_2";
  auto asVersion1 = [&](const std::string& file) {
    NamedTensors kept;
    const NamedTensors all = weights::loadTensors(step / file);
    for (const auto& [name, t] : all) {
      const bool never_updated = name.size() > 5 &&
                                 name.compare(name.size() - 5, 5, ".step") == 0 &&
                                 t.item<std::int64_t>() == 0;
      if (!never_updated) kept.emplace_back(name, t);
    }
    weights::saveTensors(kept, step / file, {{"format", "tokenbench-adamw"}, {"step", "2"}});
    return all.size() - kept.size();
  };
  EXPECT_EQ(asVersion1("optimizer.safetensors"), 0u);  // every tokenizer parameter was updated
  EXPECT_GT(asVersion1("discr_optimizer.safetensors"), 0u);
  EXPECT_TRUE(weights::loadTensors(step / "discr_optimizer.safetensors").empty());
  config.train.max_steps = 4;
  const RunResult r = train(config, dir, /*resume=*/true);
  ASSERT_EQ(r.code, 0) << (r.events.empty() ? "" : r.events.back());
  EXPECT_NE(r.events.back().find("\"status\":\"completed\",\"step\":4"), std::string::npos)
      << r.events.back();
  fs::remove_all(dir);
}

TEST(Training, ResumeRefusesACheckpointThatLostOptimizerRngOrEmaState) {
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 2;
  config.train.checkpoint_every = 2;
  config.train.ema_start_step = 0;
  const fs::path dir = freshDir("lost_state");
  ASSERT_EQ(train(config, dir).code, 0);
  const fs::path step = dir / "checkpoints" / "step_2";
  const fs::path kept = freshDir("lost_state_kept");
  fs::copy(step, kept, fs::copy_options::recursive);
  config.train.max_steps = 3;
  // Breaks one file of the checkpoint, resumes, restores the file; returns the error event.
  const std::map<std::string, std::string> v2 = {{"format", "tokenbench-adamw"},
                                                 {"state_version", "2"}};
  auto resumeWith = [&](const std::string& file, const NamedTensors& tensors,
                        const std::map<std::string, std::string>& meta = {}) {
    weights::saveTensors(tensors, step / file, meta);
    const RunResult r = train(config, dir, /*resume=*/true);
    EXPECT_EQ(r.code, 1) << file;
    fs::copy_file(kept / file, step / file, fs::copy_options::overwrite_existing);
    return errorEventOf(r);
  };
  const NamedTensors optimizer = weights::loadTensors(kept / "optimizer.safetensors");
  ASSERT_FALSE(optimizer.empty());
  const std::string first_param =
      optimizer.front().first.substr(0, optimizer.front().first.rfind('.'));

  const std::string empty = resumeWith("optimizer.safetensors", {}, v2);
  EXPECT_EQ(empty.rfind("checkpoint_unreadable: ", 0), 0u) << empty;
  EXPECT_NE(empty.find("step_2/optimizer.safetensors: missing tensor '"), std::string::npos)
      << empty;
  // A file without the optimizer's metadata is someone else's.
  const std::string foreign = resumeWith("optimizer.safetensors", optimizer);
  EXPECT_NE(foreign.find("step_2/optimizer.safetensors: not a Tokenbench optimizer state"),
            std::string::npos)
      << foreign;
  // Written before state_version 2 (only updated parameters listed): empty after step 0 is lost
  // state, not an old file.
  const std::string empty_v1 =
      resumeWith("optimizer.safetensors", {}, {{"format", "tokenbench-adamw"}});
  EXPECT_NE(
      empty_v1.find(
          "step_2/optimizer.safetensors: no optimizer state, but the checkpoint is past step 0"),
      std::string::npos)
      << empty_v1;

  // A step count of 10 stored as F64 was read as 0 (its bytes reinterpreted).
  NamedTensors float_step = optimizer;
  for (auto& [name, t] : float_step) {
    if (name == first_param + ".step") t = torch::tensor({10.0}, torch::kFloat64);
  }
  const std::string wrong_dtype = resumeWith("optimizer.safetensors", float_step, v2);
  EXPECT_NE(wrong_dtype.find("optimizer.safetensors: tensor '" + first_param +
                             ".step': expected int64 of shape [1], got Double"),
            std::string::npos)
      << wrong_dtype;
  // One count, but as a [1, 1] matrix: not what the writer writes.
  NamedTensors matrix_step = optimizer;
  for (auto& [name, t] : matrix_step) {
    if (name == first_param + ".step") t = t.reshape({1, 1});
  }
  const std::string wrong_rank = resumeWith("optimizer.safetensors", matrix_step, v2);
  EXPECT_NE(wrong_rank.find(".step': expected int64 of shape [1], got Long of shape [1, 1]"),
            std::string::npos)
      << wrong_rank;

  NamedTensors short_moment = optimizer;
  for (auto& [name, t] : short_moment) {
    if (name == first_param + ".exp_avg") t = t.flatten().narrow(0, 0, 1).clone();
  }
  const std::string wrong_shape = resumeWith("optimizer.safetensors", short_moment, v2);
  EXPECT_NE(wrong_shape.find("tensor '" + first_param + ".exp_avg': Float of shape [1]"),
            std::string::npos)
      << wrong_shape;

  const std::string no_rng = resumeWith("rng.safetensors", {});
  EXPECT_NE(
      no_rng.find(
          "step_2/rng.safetensors: tensors are not the ones expected: missing 'cpu_generator'"),
      std::string::npos)
      << no_rng;

  NamedTensors ema = weights::loadTensors(kept / "ema.safetensors");
  ema.pop_back();
  const std::string short_ema = resumeWith("ema.safetensors", ema);
  EXPECT_NE(short_ema.find("step_2/ema.safetensors: tensors are not the ones expected: missing '"),
            std::string::npos)
      << short_ema;

  // The intact checkpoint resumes.
  EXPECT_EQ(train(config, dir, /*resume=*/true).code, 0);
  fs::remove_all(dir);
  fs::remove_all(kept);
}

core::RunConfig ganConfig() {
  core::RunConfig c = testing::withTinyGan(tinyConfig(), 3);
  c.loss.r1_every = 2;
  c.loss.lecam_weight = 0.1;
  c.train.max_steps = 8;
  c.train.checkpoint_every = 4;
  return c;
}

std::vector<std::string> namesAt(const std::vector<core::MetricsRow>& rows, std::int64_t step) {
  std::vector<std::string> names;
  for (const auto& row : rows) {
    if (row.step != step) continue;
    for (const auto& [name, value] : row.values) {
      EXPECT_TRUE(std::isfinite(value)) << name << " at step " << step;
      names.push_back(name);
    }
  }
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(Training, GanTermsStartAtTheDiscriminatorStartStepAndResumeBitIdentically) {
  const core::RunConfig config = ganConfig();
  const fs::path straight = freshDir("gan_straight");
  ASSERT_EQ(train(config, straight).code, 0);
  const auto rows = trainRows(straight);
  ASSERT_EQ(rows.size(), 8u);
  // Steps 1-3 train the tokenizer alone; from step 4 on (m_step >= 3) both networks train.
  EXPECT_FALSE(has(namesAt(rows, 3), "train/discr_loss"));
  for (const char* name :
       {"train/discr_loss", "train/gan_loss", "train/adaptive_weight", "train/lecam",
        "train/logits_real", "train/logits_fake", "train/discr_grad_norm"}) {
    EXPECT_TRUE(has(namesAt(rows, 4), name)) << name;
  }
  // R1 every 2 discriminator steps: discriminator steps 0, 2, 4 are model steps 4, 6, 8.
  EXPECT_TRUE(has(namesAt(rows, 4), "train/r1_penalty"));
  EXPECT_FALSE(has(namesAt(rows, 5), "train/r1_penalty"));
  EXPECT_TRUE(fs::exists(straight / "checkpoints" / "step_8" / "discriminator.safetensors"));
  EXPECT_TRUE(fs::exists(straight / "checkpoints" / "step_8" / "discr_optimizer.safetensors"));

  const fs::path split = freshDir("gan_split");
  core::RunConfig first_half = config;
  first_half.train.max_steps = 4;
  ASSERT_EQ(train(first_half, split).code, 0);
  ASSERT_EQ(train(config, split, /*resume=*/true).code, 0);
  for (const char* file : {"model.safetensors", "discriminator.safetensors"}) {
    const std::string a = fileBytes(straight / "checkpoints" / "step_8" / file);
    ASSERT_FALSE(a.empty()) << file;
    EXPECT_TRUE(a == fileBytes(split / "checkpoints" / "step_8" / file))
        << file << " differs after resume";
  }
  fs::remove_all(straight);
  fs::remove_all(split);
}

TEST(Training, BadPerceptualWeightFileIsAnErrorNamingIt) {
  core::RunConfig config = tinyConfig();
  config.loss.perceptual_weight = 0.1;
  config.loss.perceptual_net = core::LpipsNet::Alex;
  config.data.image_size = 32;
  config.loss.lpips_backbone = "/nonexistent/alex_backbone.pth";
  config.loss.lpips_lin = "/nonexistent/alex_lin.pth";
  const fs::path dir = freshDir("perceptual_missing");
  const RunResult r = train(config, dir);
  EXPECT_NE(r.code, 0);
  bool named = false;
  for (const auto& e : r.events) {
    named |= e.find("perceptual_weights_invalid") != std::string::npos &&
             e.find("/nonexistent/") != std::string::npos;
  }
  EXPECT_TRUE(named);
  fs::remove_all(dir);

  // Frames too small for the LPIPS network: refused before training, naming both keys.
  config.data.image_size = 16;  // alex needs 31
  const fs::path small = freshDir("perceptual_small");
  const RunResult s = train(config, small);
  EXPECT_NE(s.code, 0);
  bool refused = false;
  for (const auto& e : s.events) {
    refused |= e.find("loss.perceptual_net") != std::string::npos &&
               e.find("data.image_size >= 31") != std::string::npos;
  }
  EXPECT_TRUE(refused);
  fs::remove_all(small);
}

TEST(Training, PerceptualLossWithTheFixtureWeightsIsLoggedAndValidated) {
  const fs::path fixture = fs::path(TB_SHARED_DIR) / "fixtures" / "lpips";
  if (!fs::exists(fixture / "alex_lin.pth")) GTEST_SKIP() << "no LPIPS fixture at " << fixture;
  core::RunConfig config = tinyConfig();
  config.data.image_size = 32;
  config.loss.perceptual_weight = 0.1;
  config.loss.perceptual_net = core::LpipsNet::Alex;
  config.loss.lpips_backbone = (fixture / "alex_backbone.pth").string();
  config.loss.lpips_lin = (fixture / "alex_lin.pth").string();
  config.train.max_steps = 4;
  config.train.valid_every = 4;
  config.train.valid_clips = 2;
  const fs::path dir = freshDir("perceptual");
  ASSERT_EQ(train(config, dir).code, 0);
  std::ifstream in(dir / "metrics.jsonl");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("\"train/perceptual_loss\""), std::string::npos);
  EXPECT_NE(text.find("\"valid/lpips\""), std::string::npos);
  EXPECT_NE(text.find("\"valid/ssim\""), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "samples" / "step_4.gif"));
  bool tensorboard = false;
  for (const auto& entry : fs::directory_iterator(dir / "tensorboard")) {
    tensorboard |= entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  }
  EXPECT_TRUE(tensorboard);
  fs::remove_all(dir);
}

// The non-finite guard, driven by TrainOptions::nonfinite_loss: the loss of the first `count`
// step attempts from step `from` on reads as NaN.
std::function<bool(std::int64_t)> nonfiniteLosses(std::int64_t from, std::int64_t count) {
  return [from, left = count](std::int64_t step) mutable {
    if (step < from || left == 0) return false;
    --left;
    return true;
  };
}

std::vector<std::string> eventsWith(const RunResult& r, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& e : r.events) {
    if (e.find(needle) != std::string::npos) out.push_back(e);
  }
  return out;
}

// train/lr of the last row logged for `step` (a step retried after a rollback is logged again).
double lrAt(const std::vector<core::MetricsRow>& rows, std::int64_t step) {
  double lr = -1;
  for (const auto& row : rows) {
    if (row.step != step) continue;
    for (const auto& [name, value] : row.values) {
      if (name == "train/lr") lr = value;
    }
  }
  EXPECT_GE(lr, 0) << "no train/lr at step " << step;
  return lr;
}

TEST(Training, NonFiniteStepsAreSkippedThenRolledBackWithALowerRate) {
  const fs::path dir = freshDir("nan_guard");
  core::RunConfig config = tinyConfig();
  config.train.warmup_steps = 0;
  config.train.max_steps = 10;
  config.train.checkpoint_every = 4;
  config.train.nan_max_consecutive = 3;
  config.train.nan_lr_scale = 0.5;
  TrainOptions options;
  options.nonfinite_loss = nonfiniteLosses(6, 3);  // steps 6, 6, 6: three attempts in a row
  const RunResult r = train(config, dir, options);
  ASSERT_EQ(r.code, 0) << (r.events.empty() ? "" : r.events.back());
  const auto skipped = eventsWith(r, "\"code\":\"nonfinite_step\"");
  ASSERT_EQ(skipped.size(), 3u);
  for (const auto& e : skipped)
    EXPECT_NE(e.find("step 6: non-finite loss, step skipped"), std::string::npos) << e;
  const auto rollbacks = eventsWith(r, "\"code\":\"rollback\"");
  ASSERT_EQ(rollbacks.size(), 1u);
  EXPECT_NE(
      rollbacks[0].find("rolled back to checkpoints/step_4 with the learning rate scaled by 0.5"),
      std::string::npos)
      << rollbacks[0];
  // The run went on from step 4 at half the rate and finished.
  EXPECT_NE(r.events.back().find("\"status\":\"completed\",\"step\":10"), std::string::npos)
      << r.events.back();
  // Steps 1-5 at the full rate, then (after the rollback to step 4) steps 5-10 at half of it.
  const auto rows = trainRows(dir);
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_EQ(rows[4].step, 5);
  EXPECT_EQ(rows[5].step, 5);
  EXPECT_DOUBLE_EQ(lrAt({rows[4]}, 5), config.train.lr);
  EXPECT_DOUBLE_EQ(lrAt(rows, 5), 0.5 * config.train.lr);
  EXPECT_DOUBLE_EQ(lrAt(rows, 10), 0.5 * config.train.lr);
  fs::remove_all(dir);
}

TEST(Training, NonFiniteStepsThatRollbacksCannotFixEndTheRunAsDiverged) {
  const fs::path dir = freshDir("nan_diverged");
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 20;
  config.train.checkpoint_every = 2;
  config.train.nan_max_consecutive = 2;
  config.train.nan_max_rollbacks = 2;
  TrainOptions options;
  options.nonfinite_loss = nonfiniteLosses(3, 1000);  // every attempt from step 3 on
  const RunResult r = train(config, dir, options);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(eventsWith(r, "\"code\":\"rollback\"").size(), 2u);
  const auto errors = eventsWith(r, "\"type\":\"error\"");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("\"code\":\"diverged\""), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("2 rollbacks to checkpoints/step_2"), std::string::npos) << errors[0];
  // What was saved stays: the step-2 checkpoint is complete and resumable.
  EXPECT_TRUE(fs::exists(dir / "checkpoints" / "step_2" / "COMPLETE"));
  fs::remove_all(dir);
}

TEST(Training, RetentionKeepsTheLimitAndProtectedSteps) {
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 10;
  config.train.checkpoint_every = 2;
  config.train.checkpoint_total_limit = 2;
  config.train.checkpoint_keep = {4};
  const fs::path dir = freshDir("retention");
  ASSERT_EQ(train(config, dir).code, 0);
  EXPECT_EQ(core::RunDirectory(dir).listCheckpointSteps(), (std::vector<std::int64_t>{4, 10}));
  fs::remove_all(dir);
}

TEST(Training, LockedRunDirectoryIsRefusedWithAnError) {
  const fs::path dir = freshDir("locked");
  core::RunDirectory(dir).create();
  const int fd = ::open((dir / ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const RunResult r = train(tinyConfig(), dir);
  EXPECT_EQ(r.code, 2);
  bool saw_error = false;
  for (const auto& e : r.events)
    saw_error |= e.find("\"code\":\"run_dir_locked\"") != std::string::npos;
  EXPECT_TRUE(saw_error);
  EXPECT_NE(r.events.back().find("\"status\":\"failed\""), std::string::npos);
  ::close(fd);
  fs::remove_all(dir);
}

TEST(CheckpointStore, FailedWriteLeavesEarlierCheckpointsIntact) {
  const fs::path dir = freshDir("ckpt");
  core::RunDirectory run(dir);
  run.create();
  CheckpointStore store(run);
  store.write(5, [](const fs::path& d) { core::writeFileSynced(d / "a.txt", "five"); });
  EXPECT_THROW(store.write(6,
                           [](const fs::path& d) {
                             core::writeFileSynced(d / "a.txt", "half");
                             throw std::runtime_error("disk full");
                           }),
               std::runtime_error);
  EXPECT_EQ(store.latest(), std::optional<std::int64_t>(5));
  EXPECT_FALSE(fs::exists(run.checkpointTempDir(6)));
  EXPECT_EQ(fileBytes(run.checkpointDir(5) / "a.txt"), "five");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tb::trainer
