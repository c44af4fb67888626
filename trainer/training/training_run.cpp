#include "trainer/training/training_run.h"

#include "core/config_io.h"
#include "core/metrics_log.h"
#include "trainer/data/clip_loader.h"
#include "trainer/models/tokenizer.h"
#include "trainer/runtime_info.h"
#include "trainer/torch_compat.h"
#include "trainer/training/checkpoint_store.h"
#include "trainer/training/lr_schedule.h"
#include "trainer/weights/state_dict_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double unixTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Exclusive lock on the run directory for the life of the trainer. flock is released by the
// kernel when the holder dies, so a lock left by a killed trainer is simply taken over.
class RunLock {
 public:
  explicit RunLock(const fs::path& file) {
    m_fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0) throw TrainingError("run_dir_unwritable", "cannot create " + file.string());
    if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
      char buf[32] = {};
      const ssize_t n = ::pread(m_fd, buf, sizeof buf - 1, 0);
      ::close(m_fd);
      m_fd = -1;
      throw TrainingError("run_dir_locked",
                          "run directory " + file.parent_path().string() + " is in use by another trainer" +
                              (n > 0 ? " (pid " + std::string(buf, static_cast<std::size_t>(n)) + ")" : ""),
                          "stop that trainer first, or use another --run-dir");
    }
    const std::string pid = std::to_string(::getpid());
    if (::ftruncate(m_fd, 0) == 0) {
      (void)!::pwrite(m_fd, pid.data(), pid.size(), 0);
    }
  }
  ~RunLock() {
    if (m_fd >= 0) ::close(m_fd);
  }
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int m_fd = -1;
};

// Human log: stderr and logs/rank_0.log.
class HumanLog {
 public:
  explicit HumanLog(const fs::path& file) : m_file(file, std::ios::app) {}
  void operator()(const std::string& text) {
    std::cerr << "[tokenbench-trainer] " << text << std::endl;
    if (m_file) m_file << text << std::endl;
  }

 private:
  std::ofstream m_file;
};

torch::Tensor lossTerm(const TokenizerOutput& out, const std::string& name) {
  for (const auto& [n, t] : out.losses) {
    if (n == name) return t;
  }
  throw std::logic_error("tokenizer output has no loss term \"" + name + "\"");
}

class TrainingLoop {
 public:
  TrainingLoop(const core::RunConfig& config, const core::RunDirectory& run, const TrainOptions& options,
               EventSink& events, RunControl& control)
      : m_config(config),
        m_train(config.train),
        m_run(run),
        m_options(options),
        m_events(events),
        m_control(control),
        m_store(run),
        m_log(run.logsDir() / "rank_0.log") {}

  int run();

 private:
  void setUp();
  void checkUnsupported();
  void buildOptimizer();
  void reportDataSkips(const std::vector<data::SkippedFile>& skips);
  void setRate(double rate);
  void updateEma();
  void validate();
  void saveCheckpoint();
  void loadCheckpoint(std::int64_t step);
  void truncateMetricsAfter(std::int64_t step);
  void emitWarning(const std::string& code, const std::string& message) {
    m_log("warning: " + message);
    m_events.emit(core::WarningEvent{code, message, m_step});
  }
  void writeMetrics(std::vector<std::pair<std::string, double>> values) {
    core::MetricsRow row{m_step, unixTime(), values};
    m_metrics->append(row);
    m_events.emit(core::MetricEvent{m_step, std::move(values)});
  }

  const core::RunConfig& m_config;
  const core::TrainConfig& m_train;
  core::RunDirectory m_run;
  TrainOptions m_options;
  EventSink& m_events;
  RunControl& m_control;
  CheckpointStore m_store;
  HumanLog m_log;

  std::shared_ptr<Tokenizer> m_tokenizer;
  std::unique_ptr<torch::optim::AdamW> m_optimizer;
  std::vector<std::pair<std::string, torch::Tensor>> m_ema;  // parameter name -> average
  std::unique_ptr<data::ClipDataset> m_dataset;
  std::unique_ptr<data::ClipLoader> m_loader;
  std::unique_ptr<core::MetricsWriter> m_metrics;

  std::int64_t m_step = 0;  // optimizer steps done
  double m_lr_scale = 1.0;  // lowered by rollbacks
  double m_elapsed_before = 0;  // training seconds of earlier sessions of this run
  std::int64_t m_last_checkpoint = -1;
};

void TrainingLoop::checkUnsupported() {
  if (m_train.precision == "fp16") {
    throw TrainingError("precision_unsupported", "train.precision \"fp16\" needs a CUDA build (loss scaling on GPU)",
                        "use \"bf16\" or \"fp32\" on the CPU");
  }
  if (m_config.distributed.nproc_per_node * m_config.distributed.nnodes > 1) {
    throw TrainingError("distributed_unsupported", "this build trains on one process; distributed.nproc_per_node x "
                                                   "distributed.nnodes must be 1",
                        "set distributed.nproc_per_node and distributed.nnodes to 1");
  }
  if (m_config.loss.adversarial_weight > 0) {
    emitWarning("gan_not_trained",
                "loss.adversarial_weight is " + std::to_string(m_config.loss.adversarial_weight) +
                    " but this build does not train the discriminator yet: training without the GAN loss");
  }
  if (m_config.loss.perceptual_weight > 0) {
    emitWarning("perceptual_not_trained", "loss.perceptual_weight is " +
                                              std::to_string(m_config.loss.perceptual_weight) +
                                              " but this build has no LPIPS loss yet: training without it");
  }
}

void TrainingLoop::setUp() {
  torch::manual_seed(static_cast<std::uint64_t>(m_train.seed));
  try {
    m_tokenizer = makeTokenizer(m_config.model, m_config.data);
  } catch (const std::invalid_argument& e) {
    throw TrainingError("model_invalid", e.what(), "fix the model section of config.json");
  }
  m_tokenizer->train();
  buildOptimizer();

  try {
    m_dataset = std::make_unique<data::ClipDataset>(m_config.data, static_cast<std::uint64_t>(m_train.seed),
                                                    m_run.root() / "data_index.json",
                                                    std::max(1, m_config.data.workers));
  } catch (const data::DataError& e) {
    throw TrainingError(e.code(), e.what(), e.hint());
  }
  m_log("data: " + m_dataset->describe());
  reportDataSkips(m_dataset->indexSkips());
  m_loader = std::make_unique<data::ClipLoader>(*m_dataset, m_train.batch_size, m_config.data.workers,
                                                m_config.data.prefetch);
}

// One warning per skipped file (the first 20; then one that counts the rest), each naming the
// file and the reason.
void TrainingLoop::reportDataSkips(const std::vector<data::SkippedFile>& skips) {
  constexpr std::size_t kNamed = 20;
  for (std::size_t i = 0; i < skips.size() && i < kNamed; ++i) {
    emitWarning("data_skipped", "skipping " + (fs::path(m_config.data.path) / skips[i].path).string() + ": " +
                                    skips[i].reason);
  }
  if (skips.size() > kNamed) {
    emitWarning("data_skipped", std::to_string(skips.size() - kNamed) + " more files skipped (see " +
                                    (m_run.root() / "data_index.json").string() + ")");
  }
}

void TrainingLoop::buildOptimizer() {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& p : m_tokenizer->parameters()) {
    if (!p.requires_grad()) continue;
    (p.dim() >= 2 ? decay : no_decay).push_back(p);
  }
  auto options = torch::optim::AdamWOptions(m_train.lr)
                     .betas({m_train.adam_beta1, m_train.adam_beta2})
                     .weight_decay(m_train.weight_decay);
  auto no_decay_options = options;
  no_decay_options.weight_decay(0.0);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(options));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(no_decay_options));
  m_optimizer = std::make_unique<torch::optim::AdamW>(std::move(groups), options);
}

void TrainingLoop::setRate(double rate) {
  for (auto& group : m_optimizer->param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(rate);
  }
}

void TrainingLoop::updateEma() {
  if (!m_train.ema || m_step < m_train.ema_start_step) return;
  torch::NoGradGuard no_grad;
  const auto params = m_tokenizer->named_parameters();
  if (m_ema.empty() || m_step == m_train.ema_start_step) {
    m_ema.clear();
    for (const auto& p : params) m_ema.emplace_back(p.key(), p.value().detach().clone());
    return;
  }
  if (m_step % m_train.ema_update_every != 0) return;
  for (auto& [name, avg] : m_ema) avg.mul_(m_train.ema_beta).add_(params[name].detach(), 1.0 - m_train.ema_beta);
}

void TrainingLoop::validate() {
  if (m_dataset->validSize() == 0) return;
  torch::NoGradGuard no_grad;
  // Validation uses the EMA weights when there are any: swap them in, then back.
  std::vector<torch::Tensor> backup;
  auto params = m_tokenizer->named_parameters();
  const bool use_ema = !m_ema.empty();
  if (use_ema) {
    for (auto& [name, avg] : m_ema) {
      backup.push_back(params[name].detach().clone());
      params[name].copy_(avg);
    }
  }
  m_tokenizer->eval();
  const std::int64_t n = std::min<std::int64_t>(m_train.valid_clips, m_dataset->validSize());
  double recon = 0, mse255 = 0;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(m_tokenizer->quantizer()->codebookSize()), 0);
  std::int64_t tokens = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const torch::Tensor x = m_dataset->validSample(i).unsqueeze(0);
    const TokenizerOutput out = m_tokenizer->forward(x);
    const torch::Tensor diff = (out.recon.clamp(-1, 1) - x) * 127.5;
    mse255 += diff.pow(2).mean().item<double>();
    recon += lossTerm(out, m_config.loss.recon == "mse" ? "recon_mse" : "recon_l1").item<double>();
    const torch::Tensor idx = out.indices.reshape({-1}).to(torch::kInt64).contiguous();
    const auto* p = idx.data_ptr<std::int64_t>();
    for (std::int64_t k = 0; k < idx.numel(); ++k) {
      if (p[k] >= 0 && p[k] < static_cast<std::int64_t>(counts.size())) ++counts[static_cast<std::size_t>(p[k])];
    }
    tokens += idx.numel();
  }
  m_tokenizer->train();
  if (use_ema) {
    std::size_t k = 0;
    for (auto& [name, avg] : m_ema) params[name].copy_(backup[k++]);
  }
  double entropy = 0;
  std::int64_t used = 0;
  for (auto c : counts) {
    if (c == 0) continue;
    ++used;
    const double q = static_cast<double>(c) / static_cast<double>(tokens);
    entropy -= q * std::log(q);
  }
  mse255 /= static_cast<double>(n);
  writeMetrics({{"valid/recon_loss", recon / static_cast<double>(n)},
                {"valid/psnr", mse255 > 0 ? 10.0 * std::log10(255.0 * 255.0 / mse255) : 99.0},
                {"valid/codebook_usage", static_cast<double>(used) / static_cast<double>(counts.size())},
                {"valid/perplexity", std::exp(entropy)}});
}

void TrainingLoop::saveCheckpoint() {
  const fs::path folder = m_store.write(m_step, [&](const fs::path& dir) {
    weights::saveStateDict(*m_tokenizer, dir / "model.safetensors",
                           {{"step", std::to_string(m_step)}, {"format", "tokenbench-tokenizer"}});
    if (!m_ema.empty()) weights::saveTensors(m_ema, dir / "ema.safetensors", {{"step", std::to_string(m_step)}});
    torch::serialize::OutputArchive archive;
    m_optimizer->save(archive);
    archive.save_to((dir / "optimizer.pt").string());
    weights::saveTensors({{"cpu_generator", at::detail::getDefaultCPUGenerator().get_state()}},
                         dir / "rng.safetensors");
    Json state = {{"step", m_step},
                  {"lr_scale", m_lr_scale},
                  {"elapsed_s", m_elapsed_before},
                  {"ema_active", !m_ema.empty()}};
    writeFileSynced(dir / "state.json", state.dump(2) + "\n");
    writeFileSynced(dir / "config.json", core::toJsonText(m_config));
  });
  m_last_checkpoint = m_step;
  const std::string rel = fs::relative(folder, m_run.root()).string();
  m_events.emit(core::CheckpointEvent{m_step, rel});
  m_log("checkpoint " + rel);
  for (auto s : m_store.applyRetention(m_train.checkpoint_total_limit, m_train.checkpoint_keep)) {
    m_log("retention: deleted checkpoints/step_" + std::to_string(s));
  }
}

void TrainingLoop::loadCheckpoint(std::int64_t step) {
  const fs::path dir = m_store.folder(step);
  try {
    weights::loadStateDict(*m_tokenizer, dir / "model.safetensors", true);
    torch::serialize::InputArchive archive;
    archive.load_from((dir / "optimizer.pt").string());
    m_optimizer->load(archive);
    const auto rng = weights::loadTensors(dir / "rng.safetensors");
    if (!rng.empty()) {
      at::Generator generator = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> guard(generator.mutex());
      generator.set_state(rng.front().second);
    }
    std::ifstream in(dir / "state.json");
    const Json state = Json::parse(in);
    m_step = state.at("step").get<std::int64_t>();
    m_lr_scale = state.at("lr_scale").get<double>();
    m_elapsed_before = state.at("elapsed_s").get<double>();
    m_ema.clear();
    if (state.value("ema_active", false)) {
      for (auto& [name, t] : weights::loadTensors(dir / "ema.safetensors")) m_ema.emplace_back(name, t);
    }
  } catch (const std::exception& e) {
    throw TrainingError("checkpoint_unreadable", dir.string() + ": " + e.what(),
                        "delete that folder to resume from the previous checkpoint");
  }
  m_last_checkpoint = m_step;
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
  const fs::path tmp = file.string() + ".tmp";
  writeFileSynced(tmp, kept);
  fs::rename(tmp, file);
}

int TrainingLoop::run() {
  const auto session_start = Clock::now();
  m_run.create();
  RunLock lock(m_run.lockFile());
  checkUnsupported();
  setUp();

  if (m_options.resume) {
    if (auto latest = m_store.latest()) {
      loadCheckpoint(*latest);
      m_log("resumed from checkpoints/step_" + std::to_string(*latest));
    } else {
      m_log("no complete checkpoint to resume from: starting at step 0");
    }
  }
  truncateMetricsAfter(m_step);
  m_loader->restart(m_step * m_train.grad_accum);
  writeFileSynced(m_run.configFile(), core::toJsonText(m_config));
  m_metrics = std::make_unique<core::MetricsWriter>(m_run.metricsFile());

  const double budget = m_options.time_budget_s > 0 ? m_options.time_budget_s : m_train.time_budget_s;
  const std::string recon_name = m_config.loss.recon == "mse" ? "recon_mse" : "recon_l1";
  const std::int64_t total = m_train.max_steps;
  m_log("training " + std::to_string(countParameters(*m_tokenizer)) + " parameters from step " +
        std::to_string(m_step) + " to " + std::to_string(total));

  std::vector<std::pair<std::string, double>> sums;
  int summed = 0;
  double data_wait = 0;
  int consecutive_bad = 0;
  auto interval_start = Clock::now();
  std::string status = "completed";

  while (m_step < total) {
    if (m_control.stop.load()) {
      status = "stopped";
      break;
    }
    if (budget > 0 && m_elapsed_before + secondsSince(session_start) >= budget) {
      m_log("time budget of " + std::to_string(budget) + " s reached");
      break;
    }
    const std::int64_t next = m_step + 1;
    setRate(scheduledRate(m_train, m_train.lr, next) * m_lr_scale);
    m_optimizer->zero_grad();
    TokenizerOutput out;
    double loss_value = 0;
    for (int micro = 0; micro < m_train.grad_accum; ++micro) {
      data::LoadedBatch batch;
      try {
        batch = m_loader->next();
      } catch (const data::DataError& e) {
        throw TrainingError(e.code(), e.what(), e.hint());
      }
      data_wait += batch.wait_s;
      const torch::Tensor& x = batch.clips;
      out = m_tokenizer->forward(x);
      const torch::Tensor loss = m_config.loss.recon_weight * lossTerm(out, recon_name) +
                                 m_config.loss.quantizer_weight * lossTerm(out, "quantizer");
      (loss / m_train.grad_accum).backward();
      loss_value += loss.item<double>() / m_train.grad_accum;
    }
    double grad_norm = 0;
    {
      const auto params = m_tokenizer->parameters();
      grad_norm = m_train.grad_clip > 0
                      ? torch::nn::utils::clip_grad_norm_(params, m_train.grad_clip)
                      : torch::nn::utils::clip_grad_norm_(params, std::numeric_limits<double>::infinity());
    }
    if (!std::isfinite(loss_value) || !std::isfinite(grad_norm)) {
      m_optimizer->zero_grad();
      ++consecutive_bad;
      emitWarning("nonfinite_step", "step " + std::to_string(next) + ": non-finite " +
                                        (std::isfinite(loss_value) ? "gradient norm" : "loss") + ", step skipped");
      if (consecutive_bad >= m_train.nan_max_consecutive) {
        const auto latest = m_store.latest();
        if (!latest) {
          throw TrainingError("diverged", std::to_string(consecutive_bad) +
                                              " non-finite steps in a row and no checkpoint to roll back to",
                              "lower train.lr or raise train.warmup_steps");
        }
        const double scale = m_lr_scale * m_train.nan_lr_scale;
        loadCheckpoint(*latest);
        m_loader->restart(m_step * m_train.grad_accum);
        m_lr_scale = scale;
        emitWarning("rollback", "rolled back to checkpoints/step_" + std::to_string(*latest) +
                                    " with the learning rate scaled by " + std::to_string(m_lr_scale));
        consecutive_bad = 0;
      }
      continue;
    }
    consecutive_bad = 0;
    reportDataSkips(m_dataset->takeNewSkips());
    m_optimizer->step();
    m_step = next;
    updateEma();

    // Interval means of every loss term.
    std::vector<std::pair<std::string, double>> values = {{"train/recon_loss", lossTerm(out, recon_name).item<double>()},
                                                          {"train/loss", loss_value}};
    for (const auto& [name, t] : out.losses) values.emplace_back("train/" + name, t.item<double>());
    values.emplace_back("train/grad_norm", grad_norm);
    if (sums.empty()) {
      sums = values;
    } else {
      for (std::size_t i = 0; i < sums.size() && i < values.size(); ++i) sums[i].second += values[i].second;
    }
    ++summed;

    if (m_step % m_train.log_every == 0 || m_step == total) {
      const double interval = secondsSince(interval_start);
      for (auto& v : sums) v.second /= summed;
      sums.emplace_back("train/lr", scheduledRate(m_train, m_train.lr, m_step) * m_lr_scale);
      sums.emplace_back("perf/it_per_s", summed / std::max(interval, 1e-9));
      sums.emplace_back("perf/step_s", interval / summed);
      sums.emplace_back("perf/data_wait_s", data_wait / summed);
      sums.emplace_back("perf/data_wait_fraction", data_wait / std::max(interval, 1e-9));
      sums.emplace_back("data/skipped_files", static_cast<double>(m_dataset->skippedCount()));
      const double it_per_s = summed / std::max(interval, 1e-9);
      writeMetrics(std::move(sums));
      m_events.emit(core::ProgressEvent{m_step, total, it_per_s, (total - m_step) / it_per_s});
      sums.clear();
      summed = 0;
      data_wait = 0;
      interval_start = Clock::now();
    }
    if (m_train.valid_every > 0 && m_step % m_train.valid_every == 0) validate();
    const bool periodic = m_train.checkpoint_every > 0 && m_step % m_train.checkpoint_every == 0;
    if (periodic || m_control.checkpoint.exchange(false)) {
      m_elapsed_before += secondsSince(session_start);
      saveCheckpoint();
      m_elapsed_before -= secondsSince(session_start);
    }
  }
  m_elapsed_before += secondsSince(session_start);
  if (m_last_checkpoint != m_step) saveCheckpoint();
  m_metrics->close();
  m_events.emit(core::DoneEvent{status, m_step});
  m_log("done: " + status + " at step " + std::to_string(m_step));
  return 0;
}

}  // namespace

int runTraining(const core::RunConfig& config, const core::RunDirectory& run, const TrainOptions& options,
                EventSink& events, RunControl& control) {
  const int threads = config.train.threads > 0 ? config.train.threads
                                               : std::max(1u, std::thread::hardware_concurrency());
  torch::set_num_threads(threads);
  const RuntimeInfo rt = queryRuntime();
  events.emit(makeHelloEvent(rt, 1, options.launcher, run.root().string()));
  if (rt.reference_blas) {
    events.emit(core::WarningEvent{"reference_blas",
                                   "LibTorch is using the slow reference BLAS (" + rt.blas +
                                       "); install libopenblas0-openmp",
                                   {}});
  }
  try {
    TrainingLoop loop(config, run, options, events, control);
    return loop.run();
  } catch (const TrainingError& e) {
    std::cerr << "tokenbench-trainer: error: " << e.what() << "\n";
    events.emit(core::ErrorEvent{e.code(), e.what(), e.hint()});
    events.emit(core::DoneEvent{"failed", {}});
    return e.code() == "run_dir_locked" ? 2 : 1;
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer: error: " << e.what() << "\n";
    events.emit(core::ErrorEvent{"internal", e.what(), ""});
    events.emit(core::DoneEvent{"failed", {}});
    return 1;
  }
}

}  // namespace tb::trainer
