#include "trainer/cli/baseline_command.h"

#include "core/reference_codec_info.h"
#include "trainer/baseline/reference_fit.h"
#include "trainer/cli/model_commands.h"

#include <nlohmann/json.hpp>

#include <iostream>

namespace tb::trainer::cli {

int baseline(const BaselineArgs& args) {
  core::RunConfig config;
  if (!loadConfigArgument(args.config, args.preset, config)) return 2;
  baseline::ReferenceFitOptions options;
  options.seed = args.seed.value_or(static_cast<std::uint64_t>(config.train.seed));
  options.blocks = args.blocks;
  options.iterations = args.iterations;
  options.valid_clips = config.train.valid_clips;
  auto log = [](const std::string& text) {
    std::cerr << "tokenbench-trainer baseline: " << text << "\n";
  };
  baseline::ReferenceFit fit;
  try {
    data::ClipDataset dataset(config.data, static_cast<std::uint64_t>(config.train.seed), {},
                              std::max(1, config.data.workers));
    for (const auto& s : dataset.indexSkips()) log("skipping " + s.path + ": " + s.reason);
    log("data: " + dataset.describe());
    fit = baseline::fitReferenceCodec(config, dataset, options, log);
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer baseline: " << e.what() << "\n";
    return 2;
  }
  try {
    baseline::writeReferenceFolder(fit, config, args.out);
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer baseline: " << args.out << ": " << e.what() << "\n";
    return 1;
  }
  log(fit.info.name + ": " + std::to_string(fit.info.fit_blocks) + " blocks from " +
      std::to_string(fit.info.fit_clips) + " clips in " + std::to_string(fit.info.fit_seconds) +
      " s" +
      (fit.info.valid_psnr ? ", held-out PSNR " + std::to_string(*fit.info.valid_psnr) + " dB"
                           : std::string()) +
      " -> " + args.out);
  std::cout << nlohmann::json::parse(core::toJsonText(fit.info)).dump() << std::endl;
  return 0;
}

}  // namespace tb::trainer::cli
