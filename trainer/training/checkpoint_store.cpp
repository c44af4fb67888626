#include "trainer/training/checkpoint_store.h"

#include "core/atomic_file.h"
#include "core/checkpoint_files.h"
#include "core/config_io.h"
#include "core/safetensors.h"
#include "trainer/torch_compat.h"
#include "trainer/training/flat_shard_adamw.h"
#include "trainer/training/sharded_adamw.h"
#include "trainer/training/sharded_checkpoint.h"
#include "trainer/training/training_run.h"
#include "trainer/training/training_step.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

namespace tb::trainer {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
namespace files = core::checkpoint_files;

fs::path resolveCheckpointFolder(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    throw std::runtime_error(path.string() + ": not a checkpoint folder or run directory");
  if (fs::exists(path / files::kModel, ec)) return path;
  const core::RunDirectory run(path);
  const auto steps = run.listCheckpointSteps();
  if (steps.empty())
    throw std::runtime_error(path.string() + ": run directory without a complete checkpoint");
  return run.checkpointDir(steps.back());
}

CheckpointStore::CheckpointStore(core::RunDirectory run) : m_run(std::move(run)) {}

fs::path CheckpointStore::write(std::int64_t step,
                                const std::function<void(const fs::path&)>& writeFiles) {
  const fs::path tmp = m_run.checkpointTempDir(step);
  const fs::path final_dir = m_run.checkpointDir(step);
  std::error_code ec;
  fs::remove_all(tmp, ec);
  try {
    fs::create_directories(tmp);
    writeFiles(tmp);
    for (const auto& entry : fs::directory_iterator(tmp)) core::syncPath(entry.path());
    core::writeFileSynced(tmp / files::kComplete, std::to_string(step) + "\n");
    core::syncPath(tmp);
    // A checkpoint of the same step (a resumed run saving again) is replaced whole.
    if (fs::exists(final_dir)) fs::remove_all(final_dir);
    fs::rename(tmp, final_dir);
    core::syncPath(m_run.checkpointsDir());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return final_dir;
}

std::optional<std::int64_t> CheckpointStore::latest() const {
  const auto steps = m_run.listCheckpointSteps();
  if (steps.empty()) return std::nullopt;
  return steps.back();
}

std::vector<std::int64_t> CheckpointStore::applyRetention(int total_limit,
                                                          const std::vector<int>& keep) {
  std::vector<std::int64_t> deleted;
  std::error_code ec;
  // Leftovers of interrupted writes.
  if (fs::exists(m_run.checkpointsDir())) {
    for (const auto& entry : fs::directory_iterator(m_run.checkpointsDir(), ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(".step_", 0) == 0) fs::remove_all(entry.path(), ec);
    }
  }
  if (total_limit <= 0) return deleted;
  auto steps = m_run.listCheckpointSteps();
  std::vector<std::int64_t> removable;
  for (auto s : steps) {
    if (std::find(keep.begin(), keep.end(), s) == keep.end()) removable.push_back(s);
  }
  // The limit counts every checkpoint kept; protected ones count but are never deleted.
  std::int64_t excess = static_cast<std::int64_t>(steps.size()) - total_limit;
  for (std::size_t i = 0; i < removable.size() && excess > 0; ++i, --excess) {
    // Never delete the newest checkpoint: it is the one a resume needs.
    if (removable[i] == steps.back()) break;
    fs::remove_all(m_run.checkpointDir(removable[i]), ec);
    if (!ec) deleted.push_back(removable[i]);
  }
  return deleted;
}

void CheckpointStore::writeFiles(const fs::path* dir, const TrainingState& state,
                                 const NamedTensors& optimizer_state,
                                 const NamedTensors& discr_optimizer_state) {
  TrainingStep& steps = state.steps;
  const RunProgress& progress = state.progress;
  const std::string step = std::to_string(progress.step);
  // state_version 2: every parameter has a ".step" entry (0: never updated).
  const FileMetadata adamw_meta = {
      {"step", step}, {"format", "tokenbench-adamw"}, {"state_version", "2"}};
  std::map<std::string, fs::path> files;
  auto path = [&](const std::string& name) -> const fs::path* {
    if (dir == nullptr) return nullptr;
    fs::path& file = files[name];
    file = *dir / name;
    return &file;
  };
  distributed::ParameterShards* shards = steps.shards();
  std::vector<torch::Tensor>& ema_shares = steps.emaShares();

  writeModelWeights(*steps.tokenizer(), shards, path(files::kModel),
                    {{"step", step}, {"format", "tokenbench-tokenizer"}});
  if (!ema_shares.empty()) {
    writeGatheredFile(*shards, path(files::kEma), {}, {GatheredSeries{&ema_shares, "", nullptr}},
                      {{"step", step}});
  } else if (dir && !state.ema.empty()) {
    weights::saveTensors(state.ema, *dir / files::kEma, {{"step", step}});
  }
  if (FlatShardAdamW* flat = steps.flatOptimizer()) {
    flat->writeState(path(files::kOptimizer), adamw_meta);
  } else if (dir) {
    weights::saveTensors(optimizer_state, *dir / files::kOptimizer, adamw_meta);
  }
  if (const auto discr = steps.discriminator()) {
    writeModelWeights(*discr, steps.discriminatorShards(), path(files::kDiscriminator),
                      {{"step", step}, {"format", "tokenbench-discriminator"}});
    if (FlatShardAdamW* flat = steps.discriminatorFlatOptimizer()) {
      flat->writeState(path(files::kDiscriminatorOptimizer), adamw_meta);
    } else if (dir) {
      weights::saveTensors(discr_optimizer_state, *dir / files::kDiscriminatorOptimizer,
                           adamw_meta);
    }
  }
  if (dir == nullptr) return;
  NamedTensors rng = {{"cpu_generator", at::detail::getDefaultCPUGenerator().get_state()}};
  if (state.device.is_cuda())
    rng.emplace_back("cuda_generator", compat::cudaRngState(state.device.index()));
  weights::saveTensors(rng, *dir / files::kRng);
  Json json = {{"step", progress.step},
               {"lr_scale", progress.lr_scale},
               {"schedule_end", progress.schedule_end},
               {"elapsed_s", progress.elapsed_s},
               {"batches", progress.batches},
               {"ema_active", !state.ema.empty() || !ema_shares.empty()},
               {"lecam",
                {{"real", steps.lecam().real},
                 {"fake", steps.lecam().fake},
                 {"initialised", steps.lecam().initialised}}}};
  auto scalerState = [](const LossScaler& scaler) {
    return Json{{"scale", scaler.scale()},
                {"clean_steps", scaler.cleanSteps()},
                {"skipped", scaler.skippedSteps()}};
  };
  if (const LossScaler* scaler = steps.lossScaler()) json["loss_scale"] = scalerState(*scaler);
  if (const LossScaler* scaler = steps.discriminatorLossScaler())
    json["discr_loss_scale"] = scalerState(*scaler);
  core::writeFileSynced(*dir / files::kState, json.dump(2) + "\n");
  core::writeFileSynced(*dir / files::kConfig, core::toJsonText(state.config));
}

namespace {

// Every tensor a resume restores must be there with its dtype and shape: a resume that quietly
// starts an optimizer afresh is not the run it continues. `load` takes the checked file's state
// into the optimizer the strategy has (ShardedAdamW, or FlatShardAdamW under zero2 and zero3).
using LoadOptimizerState = std::function<void(const NamedTensors&, bool every_parameter_listed)>;

void loadOptimizerFile(const fs::path& file, bool updated_since_start,
                       const LoadOptimizerState& load) {
  try {
    const core::SafetensorsFile f = core::SafetensorsFile::read(file);
    const auto& meta = f.metadata();
    const auto format = meta.find("format");
    if (format == meta.end() || format->second != "tokenbench-adamw")
      throw std::runtime_error(
          "not a Tokenbench optimizer state (metadata format is not \"tokenbench-adamw\")");
    NamedTensors optimizer_state;
    for (const auto& info : f.tensors())
      optimizer_state.emplace_back(info.name, weights::readTensor(f, info));
    // Checkpoints written before state_version 2 list only the parameters that were updated
    // (they stay resumable); an empty one after steps that updated every parameter is not.
    const bool listed = meta.count("state_version") > 0;
    if (!listed && optimizer_state.empty() && updated_since_start)
      throw std::runtime_error("no optimizer state, but the checkpoint is past step 0");
    load(optimizer_state, listed);
  } catch (const weights::WeightsError&) {
    throw;  // names the file already
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

LoadOptimizerState into(ShardedAdamW* optimizer, FlatShardAdamW* flat) {
  return [=](const NamedTensors& optimizer_state, bool listed) {
    if (optimizer) optimizer->loadState(optimizer_state, listed);
    if (flat) flat->loadState(optimizer_state, listed);
  };
}

// Exactly the generator states a checkpoint holds: the CPU's, and the CUDA device's when it was
// written on one (applied only when training on CUDA: the loop draws from the CPU generator
// whatever the device, so a checkpoint moves between devices).
void loadGenerators(const fs::path& file, const torch::Device& device) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> guard(generator.mutex());
  const auto rng = weights::loadExpectedTensors(file, {{"cpu_generator", generator.get_state()}},
                                                {"cuda_generator"});
  generator.set_state(rng.front().second);
  if (rng.size() > 1 && device.is_cuda()) compat::setCudaRngState(device.index(), rng[1].second);
}

// The EMA holds every parameter of the tokenizer; under zero3 their names, shapes and dtypes come
// from the shards (the module's own are freed between forwards).
void loadEma(const fs::path& file, TrainingState& state) {
  TrainingStep& steps = state.steps;
  NamedTensors expected;
  if (steps.parametersSharded()) {
    const distributed::ParameterShards& shards = *steps.shards();
    for (std::size_t k = 0; k < shards.names().size(); ++k) {
      expected.emplace_back(
          shards.names()[k],
          torch::empty({}, torch::dtype(shards.dtype(k))).expand(shards.shape(k)));
    }
  } else {
    for (const auto& p : steps.tokenizer()->named_parameters())
      expected.emplace_back(p.key(), p.value());
  }
  NamedTensors ema = weights::loadExpectedTensors(file, expected);
  if (steps.parametersSharded()) {
    steps.emaShares() = sharesOf(*steps.shards(), ema);
  } else {
    for (auto& [name, t] : ema) state.ema.emplace_back(name, t.to(state.device));
  }
}

}  // namespace

void CheckpointStore::load(std::int64_t step, TrainingState& state,
                           const std::function<void(const std::string&)>& log) const {
  const fs::path dir = folder(step);
  TrainingStep& steps = state.steps;
  try {
    loadModelWeights(*steps.tokenizer(), steps.shards(), dir / files::kModel);
    loadOptimizerFile(dir / files::kOptimizer, step > 0,
                      into(steps.optimizer(), steps.flatOptimizer()));
    if (const auto discr = steps.discriminator()) {
      // A checkpoint written before the GAN was switched on has no discriminator: it starts fresh.
      if (fs::exists(dir / files::kDiscriminator)) {
        loadModelWeights(*discr, steps.discriminatorShards(), dir / files::kDiscriminator);
        loadOptimizerFile(dir / files::kDiscriminatorOptimizer, false,
                          into(steps.discriminatorOptimizer(), steps.discriminatorFlatOptimizer()));
      } else {
        log("checkpoint " + dir.string() +
            " has no discriminator: it starts from its initialisation");
      }
    }
    loadGenerators(dir / files::kRng, state.device);
    std::ifstream in(dir / files::kState);
    const Json json = Json::parse(in);
    RunProgress& progress = state.progress;
    progress.step = json.at("step").get<std::int64_t>();
    progress.lr_scale = json.at("lr_scale").get<double>();
    progress.schedule_end = json.value("schedule_end", std::int64_t{0});
    progress.elapsed_s = json.at("elapsed_s").get<double>();
    // Skipped steps (loss-scale overflows, non-finite steps) consume batches too; checkpoints
    // written before this was recorded had one batch per micro-step.
    progress.batches = json.value("batches", progress.step * state.config.train.grad_accum);
    if (json.contains("lecam")) {
      gan::LecamAnchors& lecam = steps.lecam();
      lecam.real = json["lecam"].value("real", 0.0);
      lecam.fake = json["lecam"].value("fake", 0.0);
      lecam.initialised = json["lecam"].value("initialised", false);
    }
    // A run that turns loss scaling on at resume starts from loss_scale_init.
    auto restoreScaler = [&](LossScaler* scaler, const char* key) {
      if (scaler == nullptr || !json.contains(key)) return;
      const Json& j = json.at(key);
      scaler->restore(j.at("scale").get<double>(), j.at("clean_steps").get<std::int64_t>(),
                      j.at("skipped").get<std::int64_t>());
    };
    restoreScaler(steps.lossScaler(), "loss_scale");
    restoreScaler(steps.discriminatorLossScaler(), "discr_loss_scale");
    state.ema.clear();
    steps.emaShares().clear();
    if (json.value("ema_active", false)) loadEma(dir / files::kEma, state);
  } catch (const std::exception& e) {
    throw TrainingError("checkpoint_unreadable", dir.string() + ": " + e.what(),
                        "delete that folder to resume from the previous checkpoint");
  }
}

}  // namespace tb::trainer
