#include "trainer/cli/model_commands.h"

#include "trainer/training_device.h"

#include "core/atomic_file.h"
#include "core/checkpoint_files.h"
#include "core/config_io.h"
#include "core/model_info.h"
#include "core/presets.h"
#include "core/version.h"
#include "trainer/models/discriminator.h"
#include "trainer/models/tokenizer.h"
#include "trainer/weights/state_dict_io.h"

#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>

namespace tb::trainer::cli {

bool loadConfigArgument(const std::string& source, const std::string& preset,
                        core::RunConfig& out) {
  core::ConfigLoad load;
  std::string name = source;
  if (source.empty() && preset.empty()) {
    std::cerr << "tokenbench-trainer: give --config FILE|- or --preset NAME\n";
    return false;
  }
  if (source.empty()) {
    name = "preset " + preset;
    load = core::loadPreset(preset);
  } else if (source == "-") {
    name = "<stdin>";
    const std::string text((std::istreambuf_iterator<char>(std::cin)),
                           std::istreambuf_iterator<char>());
    load = core::parseRunConfig(std::string_view(text));
  } else {
    load = core::loadRunConfig(source);
  }
  if (!load.ok()) {
    for (const auto& e : load.errors)
      std::cerr << (e.path.empty() ? name : e.path) << ": " << e.message << "\n";
    std::cerr << name << ": " << load.errors.size()
              << (load.errors.size() == 1 ? " error" : " errors") << "\n";
    return false;
  }
  out = load.config;
  return true;
}

nlohmann::ordered_json modelInfoJson(const core::RunConfig& config) {
  torch::NoGradGuard no_grad;
  const auto tokenizer = makeTokenizer(config.model, config.data);
  const auto discriminator = makeDiscriminator(config.model, config.data);
  const auto s = tokenizer->stats(config.data.num_frames, config.data.image_size);
  const std::int64_t discr_params = countParameters(*discriminator);
  const std::int64_t tokens = s.token_grid[0] * s.token_grid[1] * s.token_grid[2];
  const double bits = tokenizer->quantizer()->bitsPerToken();
  const double input_bits = 8.0 * static_cast<double>(s.input_shape[0] * s.input_shape[1] *
                                                      s.input_shape[2] * s.input_shape[3]);
  // "auto" as it would run on this machine's CPU.
  const double act_bytes =
      resolvePrecision(config.train.precision, torch::kCPU) == core::Precision::Fp32 ? 4.0 : 2.0;
  const double memory =
      16.0 * static_cast<double>(s.tokenizerParams() + discr_params) +
      static_cast<double>(config.train.batch_size) * s.activation_elements * act_bytes;
  core::ModelInfo info;
  info.kind = core::choiceName(config.model.kind);
  info.tokenizer_params = s.tokenizerParams();
  info.encoder_params = s.encoder_params;
  info.decoder_params = s.decoder_params;
  info.quantizer_params = s.quantizer_params;
  info.discriminator_params = discr_params;
  info.input_shape.assign(s.input_shape.begin(), s.input_shape.end());
  info.token_grid.assign(s.token_grid.begin(), s.token_grid.end());
  info.tokens_per_clip = tokens;
  info.bits_per_token = bits;
  info.compression_ratio = input_bits / (static_cast<double>(tokens) * bits);
  info.forward_flops_per_clip = s.forward_flops;
  info.batch_size = config.train.batch_size;
  info.peak_training_memory_bytes = std::llround(memory);
  return core::toJson(info);
}

int modelInfo(const std::string& source, const std::string& preset) {
  core::RunConfig config;
  if (!loadConfigArgument(source, preset, config)) return 2;
  try {
    std::cout << modelInfoJson(config).dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer model-info: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

void writeCheckpointFolder(const std::filesystem::path& out, const core::RunConfig& config,
                           const weights::NamedTensors& tokenizer,
                           const weights::NamedTensors& discriminator,
                           std::map<std::string, std::string> metadata) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out, ec)) throw std::runtime_error(out.string() + " already exists");
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  const fs::path tmp =
      parent / ("." + out.filename().string() + ".tmp-" + std::to_string(std::random_device{}()));
  try {
    fs::create_directories(tmp);
    metadata["module"] = "tokenizer";
    weights::saveTensors(tokenizer, tmp / core::checkpoint_files::kModel, metadata);
    if (!discriminator.empty()) {
      metadata["module"] = "discriminator";
      weights::saveTensors(discriminator, tmp / core::checkpoint_files::kDiscriminator, metadata);
    }
    core::writeFileSynced(tmp / core::checkpoint_files::kConfig, core::toJsonText(config));
    fs::rename(tmp, out);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

int initCheckpoint(const std::string& source, const std::string& preset,
                   const std::filesystem::path& out) {
  core::RunConfig config;
  if (!loadConfigArgument(source, preset, config)) return 2;
  std::error_code ec;
  if (std::filesystem::exists(out, ec)) {
    std::cerr << "tokenbench-trainer init: " << out.string() << " already exists\n";
    return 1;
  }
  try {
    torch::manual_seed(static_cast<std::uint64_t>(config.train.seed));
    const auto tokenizer = makeTokenizer(config.model, config.data);
    const auto discriminator = makeDiscriminator(config.model, config.data);
    writeCheckpointFolder(out, config, weights::stateDict(*tokenizer),
                          weights::stateDict(*discriminator),
                          {{"format", "tokenbench"},
                           {"tokenbench_version", core::versionString()},
                           {"model_kind", core::choiceName(config.model.kind)}});
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer init: " << e.what() << "\n";
    return 1;
  }
  std::cout << out.string() << "\n";
  return 0;
}

}  // namespace tb::trainer::cli
