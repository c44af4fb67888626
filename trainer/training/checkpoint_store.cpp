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
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
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
               {"discriminator", steps.discriminator() != nullptr},
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

/// A state.json field that is missing, of the wrong type or out of range: "FILE: FIELD: what".
class StateFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ScalerState {
  double scale = 0;
  std::int64_t clean_steps = 0, skipped = 0;
};

/// Everything a checkpoint's state.json holds, each field checked.
struct StateFile {
  RunProgress progress;
  bool has_batches = false;
  bool ema_active = false;
  std::optional<bool> discriminator;  ///< absent in checkpoints written before it was recorded
  std::optional<gan::LecamAnchors> lecam;
  std::optional<ScalerState> loss_scale, discr_loss_scale;
};

/// `text` (the file `file`) as JSON; a parse failure said in words.
Json parseStateText(const std::string& text, const fs::path& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw StateFileError(file.string() + ": empty (the checkpoint was not written completely)");
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while
    // parsing value - invalid literal; last read: '1.5x'" -> where, and what was read.
    std::string what = e.what();
    const auto at = what.find("at line ");
    std::string where = at == std::string::npos ? "" : what.substr(at, what.find(':', at) - at);
    const auto dash = what.find(" - ");
    const std::string detail = dash == std::string::npos ? "" : what.substr(dash + 3);
    // At its end, whatever the parser expected there (a value, a closing quote): cut short.
    const bool cut =
        what.find("unexpected end of input") != std::string::npos || e.byte >= text.size();
    throw StateFileError(file.string() + ": " +
                         (cut ? "ends before its JSON does (cut short?)" : "is not valid JSON") +
                         (where.empty() ? "" : " " + where) +
                         (detail.empty() || cut ? "" : " (" + detail + ")"));
  }
}

StateFile readStateFile(const fs::path& file, std::int64_t folder_step) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw StateFileError(file.string() + ": missing or unreadable");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Json json = parseStateText(text, file);
  if (!json.is_object())
    throw StateFileError(file.string() + ": holds " + std::string(json.type_name()) +
                         ", not an object of fields");
  auto fail = [&](const std::string& key, const std::string& what) {
    throw StateFileError(file.string() + ": " + key + ": " + what);
  };
  auto find = [&](const Json& object, const std::string& key, const std::string& name,
                  bool required) -> const Json* {
    const auto it = object.find(key);
    if (it == object.end()) {
      if (required) fail(name, "missing");
      return nullptr;
    }
    return &*it;
  };
  auto whole = [&](const Json& object, const std::string& key, const std::string& name,
                   bool required, std::int64_t fallback) -> std::int64_t {
    const Json* v = find(object, key, name, required);
    if (!v) return fallback;
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      fail(name, "too large: " + v->dump());
    if (!v->is_number_integer()) fail(name, "must be a whole number, got " + v->dump());
    const std::int64_t n = v->get<std::int64_t>();
    if (n < 0) fail(name, "must be >= 0, got " + v->dump());
    return n;
  };
  auto number = [&](const Json& object, const std::string& key, const std::string& name,
                    bool required, double fallback, double lo, bool lo_open, double hi) -> double {
    const Json* v = find(object, key, name, required);
    if (!v) return fallback;
    if (!v->is_number()) fail(name, "must be a number, got " + v->dump());
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || (lo_open && x == lo) || x > hi)
      fail(name, std::string("must be in ") + (lo_open ? "(" : "[") + Json(lo).dump() + ", " +
                     Json(hi).dump() + "], got " + v->dump());
    return x;
  };
  auto flag = [&](const Json& object, const std::string& key, const std::string& name,
                  bool fallback) -> bool {
    const Json* v = find(object, key, name, false);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(name, "must be true or false, got " + v->dump());
    return v->get<bool>();
  };
  StateFile out;
  RunProgress& p = out.progress;
  p.step = whole(json, "step", "step", true, 0);
  if (p.step != folder_step)
    fail("step",
         std::to_string(p.step) + ", but the folder is step_" + std::to_string(folder_step));
  p.lr_scale = number(json, "lr_scale", "lr_scale", true, 1.0, 0.0, true, 1.0);
  p.schedule_end = whole(json, "schedule_end", "schedule_end", false, 0);
  p.elapsed_s = number(json, "elapsed_s", "elapsed_s", true, 0.0, 0.0, false, 1e12);
  out.has_batches = json.contains("batches");
  p.batches = whole(json, "batches", "batches", false, 0);
  out.ema_active = flag(json, "ema_active", "ema_active", false);
  if (json.contains("discriminator"))
    out.discriminator = flag(json, "discriminator", "discriminator", false);
  if (const Json* lecam = find(json, "lecam", "lecam", false)) {
    if (!lecam->is_object()) fail("lecam", "must be an object, got " + lecam->dump());
    gan::LecamAnchors anchors;
    anchors.real = number(*lecam, "real", "lecam.real", false, 0.0, -1e30, false, 1e30);
    anchors.fake = number(*lecam, "fake", "lecam.fake", false, 0.0, -1e30, false, 1e30);
    anchors.initialised = flag(*lecam, "initialised", "lecam.initialised", false);
    out.lecam = anchors;
  }
  for (auto [key, target] : {std::pair{"loss_scale", &out.loss_scale},
                             std::pair{"discr_loss_scale", &out.discr_loss_scale}}) {
    const Json* scaler = find(json, key, key, false);
    if (!scaler) continue;
    const std::string name = key;
    if (!scaler->is_object()) fail(name, "must be an object, got " + scaler->dump());
    ScalerState st;
    st.scale = number(*scaler, "scale", name + ".scale", true, 0.0, 0.0, true,
                      std::numeric_limits<double>::max());
    st.clean_steps = whole(*scaler, "clean_steps", name + ".clean_steps", true, 0);
    st.skipped = whole(*scaler, "skipped", name + ".skipped", true, 0);
    *target = st;
  }
  return out;
}

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
    // state.json first: every field checked before anything is restored.
    const StateFile saved = readStateFile(dir / files::kState, step);
    loadModelWeights(*steps.tokenizer(), steps.shards(), dir / files::kModel);
    loadOptimizerFile(dir / files::kOptimizer, step > 0,
                      into(steps.optimizer(), steps.flatOptimizer()));
    if (const auto discr = steps.discriminator()) {
      // A checkpoint written before the GAN was switched on has no discriminator: it starts
      // fresh. One that had one (its state.json says so, or it holds either file) must have both.
      const bool had =
          saved.discriminator.value_or(fs::exists(dir / files::kDiscriminator) ||
                                       fs::exists(dir / files::kDiscriminatorOptimizer));
      if (had) {
        if (!fs::exists(dir / files::kDiscriminator))
          throw StateFileError((dir / files::kDiscriminator).string() +
                               ": missing, though the checkpoint was written with a "
                               "discriminator");
        loadModelWeights(*discr, steps.discriminatorShards(), dir / files::kDiscriminator);
        loadOptimizerFile(dir / files::kDiscriminatorOptimizer, false,
                          into(steps.discriminatorOptimizer(), steps.discriminatorFlatOptimizer()));
      } else {
        log("checkpoint " + dir.string() +
            " has no discriminator: it starts from its initialisation");
      }
    }
    loadGenerators(dir / files::kRng, state.device);
    RunProgress& progress = state.progress;
    progress = saved.progress;
    // Skipped steps (loss-scale overflows, non-finite steps) consume batches too; checkpoints
    // written before this was recorded had one batch per micro-step.
    if (!saved.has_batches) progress.batches = progress.step * state.config.train.grad_accum;
    if (saved.lecam) steps.lecam() = *saved.lecam;
    // A run that turns loss scaling on at resume starts from loss_scale_init.
    auto restoreScaler = [&](LossScaler* scaler, const std::optional<ScalerState>& s) {
      if (scaler != nullptr && s) scaler->restore(s->scale, s->clean_steps, s->skipped);
    };
    restoreScaler(steps.lossScaler(), saved.loss_scale);
    restoreScaler(steps.discriminatorLossScaler(), saved.discr_loss_scale);
    state.ema.clear();
    steps.emaShares().clear();
    if (saved.ema_active) {
      if (!fs::exists(dir / files::kEma))
        throw StateFileError((dir / files::kEma).string() +
                             ": missing, though state.json says the EMA was on");
      loadEma(dir / files::kEma, state);
    }
  } catch (const StateFileError& e) {  // names its file already
    throw TrainingError("checkpoint_unreadable", e.what(),
                        "delete " + dir.string() + " to resume from the previous checkpoint");
  } catch (const std::exception& e) {
    throw TrainingError("checkpoint_unreadable", dir.string() + ": " + e.what(),
                        "delete that folder to resume from the previous checkpoint");
  }
}

}  // namespace tb::trainer
