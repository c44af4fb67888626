#include "trainer/cli/magvit2_commands.h"

#include "core/atomic_file.h"
#include "core/checkpoint_files.h"
#include "core/version.h"
#include "trainer/cli/model_commands.h"
#include "trainer/cli/token_commands.h"
#include "trainer/weights/magvit2_kwargs.h"
#include "trainer/weights/magvit2_names.h"
#include "trainer/weights/pickle_reader.h"
#include "trainer/weights/reference_fill.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace tb::trainer::cli {
namespace fs = std::filesystem;
namespace {

using Json = nlohmann::json;
using weights::ReferenceTensor;

constexpr const char* kImport = "tokenbench-trainer import-magvit2: ";
constexpr const char* kExport = "tokenbench-trainer export-magvit2: ";

std::vector<std::int64_t> shapeOf(const torch::Tensor& t) { return t.sizes().vec(); }

/// What a reference file holds.
struct ReferenceFile {
  std::map<std::string, torch::Tensor> tensors;
  std::string format;          ///< "safetensors" or "VideoTokenizer.save()"
  std::string version;         ///< magvit2-pytorch's version when the file records it
  std::optional<Json> kwargs;  ///< the saved configuration, when readable
  std::string kwargs_problem;  ///< why it is not, when the file has one
};

std::map<std::string, torch::Tensor> stateDictOf(const weights::PickleValue& dict,
                                                 const fs::path& path) {
  std::map<std::string, torch::Tensor> out;
  for (auto& [name, tensor] : weights::stateDictTensors(dict, path)) out.emplace(name, tensor);
  return out;
}

ReferenceFile readReferenceFile(const fs::path& path) {
  ReferenceFile file;
  if (path.extension() == ".safetensors") {
    file.format = "safetensors";
    for (auto& [name, tensor] : weights::loadTensors(path)) file.tensors.emplace(name, tensor);
    return file;
  }
  const weights::PickleRef root = weights::readTorchSave(path);
  if (root->kind != weights::PickleValue::Kind::Dict)
    throw weights::PickleError(path.string() + ": holds a " + root->describe() + ", not a dict");
  const weights::PickleValue* state = root->find("model_state_dict");
  if (!state) {
    file.format = "torch.save(state_dict)";  // a bare state dict
    file.tensors = stateDictOf(*root, path);
    return file;
  }
  file.format = "VideoTokenizer.save()";
  if (state->kind != weights::PickleValue::Kind::Dict)
    throw weights::PickleError(path.string() + ": model_state_dict is a " + state->describe());
  file.tensors = stateDictOf(*state, path);
  if (const auto* version = root->find("version");
      version && version->kind == weights::PickleValue::Kind::String)
    file.version = version->text;
  if (const auto* config = root->find("config")) {
    try {
      // VideoTokenizer.save() stores pickle.dumps(kwargs): a pickle inside the pickle.
      const weights::PickleRef kwargs =
          config->kind == weights::PickleValue::Kind::Bytes
              ? weights::readPickle(config->text, path.string() + ": config")
              : std::make_shared<weights::PickleValue>(*config);
      file.kwargs = weights::kwargsFromPickle(*kwargs);
    } catch (const weights::PickleError& e) {
      file.kwargs_problem = e.what();
    }
  }
  return file;
}

Json readKwargsFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path.string() + ": cannot open");
  try {
    return Json::parse(in);
  } catch (const Json::parse_error& e) {
    throw std::runtime_error(path.string() + ": not valid JSON: " + e.what());
  }
}

int fail(const char* command, const std::string& message, int code = 2) {
  std::cerr << command << message << "\n";
  return code;
}

}  // namespace

int importMagvit2(const ImportMagvit2Args& args) {
  const fs::path weights_path(args.weights);
  std::error_code ec;
  if (fs::exists(args.out, ec)) return fail(kImport, args.out + " already exists", 2);
  ReferenceFile file;
  try {
    file = readReferenceFile(weights_path);
  } catch (const std::exception& e) {
    return fail(kImport, e.what());
  }

  Json kwargs;
  std::string kwargs_source;
  try {
    if (!args.config.empty()) {
      kwargs = readKwargsFile(args.config);
      kwargs_source = args.config;
    } else if (file.kwargs) {
      kwargs = *file.kwargs;
      kwargs_source = args.weights + " (its saved configuration)";
    } else {
      return fail(kImport,
                  args.weights + " holds no readable VideoTokenizer configuration" +
                      (file.kwargs_problem.empty() ? "" : " (" + file.kwargs_problem + ")") +
                      ": give --config KWARGS.json");
    }
  } catch (const std::exception& e) {
    return fail(kImport, e.what());
  }
  const weights::KwargsImport imported = weights::importVideoTokenizerKwargs(kwargs);
  for (const auto& note : imported.notes) std::cerr << kImport << "note: " << note << "\n";
  if (!imported.errors.empty()) {
    for (const auto& e : imported.errors) std::cerr << kwargs_source << ": " << e << "\n";
    return fail(kImport, kwargs_source + ": " + std::to_string(imported.errors.size()) +
                             " argument(s) Tokenbench cannot honour");
  }
  const core::RunConfig& config = imported.config;

  std::shared_ptr<Tokenizer> tokenizer;
  try {
    tokenizer = makeTokenizer(config.model, config.data);
  } catch (const std::invalid_argument& e) {
    return fail(kImport, kwargs_source + ": " + e.what());
  }
  const auto& magvit = dynamic_cast<const MagvitTokenizerImpl&>(*tokenizer);

  std::set<std::string> used;
  std::vector<std::string> problems;
  weights::fillFromReference(*tokenizer, weights::referenceTokenizerTensors(magvit), file.tensors,
                             used, problems);
  for (const auto& [name, expected] : weights::referenceConstants(magvit)) {
    const auto it = file.tensors.find(name);
    if (it == file.tensors.end()) continue;  // derived: a file without it loses nothing
    used.insert(name);
    if (shapeOf(it->second) != shapeOf(expected) ||
        !torch::equal(it->second.to(torch::kLong), expected))
      problems.push_back("differs: " + name + " " + weights::shapeText(shapeOf(it->second)) +
                         " is not the bit weights of a " + std::to_string(expected.numel()) +
                         "-bit LFQ codebook");
  }
  std::map<std::string, torch::Tensor> discr_file;
  for (const auto& [name, tensor] : file.tensors) {
    if (name.rfind("discr.", 0) == 0)
      discr_file.emplace(name, tensor);
    else if (!used.count(name))
      problems.push_back("no place in Tokenbench: " + name + " " +
                         weights::shapeText(shapeOf(tensor)));
  }
  if (!problems.empty()) {
    std::cerr << kImport << args.weights << " does not fit the tokenizer " << kwargs_source
              << " describes:\n";
    for (const auto& p : problems) std::cerr << "  " << p << "\n";
    return 2;
  }

  // The discriminator comes along when the file's fits the one Tokenbench builds for the same
  // arguments; otherwise it is reported and training starts a fresh one.
  weights::NamedTensors discr_tensors;
  if (!discr_file.empty()) {
    std::vector<std::string> discr_problems;
    try {
      auto discr = makeDiscriminator(config.model, config.data);
      std::set<std::string> discr_used;
      weights::fillFromReference(*discr,
                                 weights::referenceDiscriminatorTensors(
                                     dynamic_cast<const FrameDiscriminatorImpl&>(*discr)),
                                 discr_file, discr_used, discr_problems);
      for (const auto& [name, tensor] : discr_file)
        if (!discr_used.count(name))
          discr_problems.push_back("no place in Tokenbench: " + name + " " +
                                   weights::shapeText(shapeOf(tensor)));
      if (discr_problems.empty()) discr_tensors = weights::stateDict(*discr);
    } catch (const std::exception& e) {
      discr_problems.push_back(e.what());
    }
    if (!discr_problems.empty()) {
      std::cerr << kImport << "the discriminator (" << discr_file.size()
                << " discr.* tensors) does not fit Tokenbench's and is left out:\n";
      for (const auto& p : discr_problems) std::cerr << "  " << p << "\n";
    }
  }

  std::map<std::string, std::string> metadata{
      {"format", "tokenbench"},
      {"tokenbench_version", core::versionString()},
      {"model_kind", core::choiceName(config.model.kind)},
      {"imported_from", args.weights},
      {"imported_format", "magvit2-pytorch " + file.format},
      {core::checkpoint_files::kSourceNameKey,
       args.name.empty() ? "magvit2-pytorch " + weights_path.stem().string() : args.name}};
  if (!file.version.empty()) metadata["magvit2_pytorch_version"] = file.version;
  try {
    writeCheckpointFolder(args.out, config, weights::stateDict(*tokenizer), discr_tensors,
                          metadata);
  } catch (const std::exception& e) {
    return fail(kImport, e.what(), 1);
  }
  std::cerr << kImport << "imported " << used.size() << " tensors (" << countParameters(*tokenizer)
            << " parameters) from " << args.weights
            << (discr_tensors.empty()
                    ? std::string()
                    : "; discriminator: " + std::to_string(discr_file.size()) + " tensors")
            << "; model.pixel_range zero_one\n";
  std::cout << args.out << "\n";
  return 0;
}

int exportMagvit2(const ExportMagvit2Args& args) {
  LoadedCheckpoint ckpt;
  try {
    ckpt = loadCheckpoint(args.checkpoint, !args.raw_weights);
  } catch (const std::exception& e) {
    return fail(kExport, e.what());
  }
  const fs::path config_file = ckpt.folder / core::checkpoint_files::kConfig;
  const weights::KwargsExport exported = weights::exportVideoTokenizerKwargs(ckpt.config);
  if (!exported.errors.empty()) {
    for (const auto& e : exported.errors) std::cerr << config_file.string() << ": " << e << "\n";
    return fail(kExport, config_file.string() + ": " + std::to_string(exported.errors.size()) +
                             " setting(s) magvit2-pytorch's VideoTokenizer cannot express");
  }
  const auto& magvit = dynamic_cast<const MagvitTokenizerImpl&>(*ckpt.tokenizer);
  weights::NamedTensors out;
  std::map<std::string, torch::Tensor> state;
  for (auto& [name, tensor] : weights::stateDict(magvit)) state.emplace(name, tensor);
  for (const auto& n : weights::referenceTokenizerTensors(magvit))
    out.emplace_back(n.reference, state.at(n.tokenbench));
  for (auto& constant : weights::referenceConstants(magvit)) out.push_back(constant);

  std::string discr_note;
  const fs::path discr_file = ckpt.folder / core::checkpoint_files::kDiscriminator;
  std::error_code ec;
  if (fs::exists(discr_file, ec)) {
    try {
      auto discr = makeDiscriminator(ckpt.config.model, ckpt.config.data);
      const auto* frame = dynamic_cast<const FrameDiscriminatorImpl*>(discr.get());
      if (!frame)
        throw std::runtime_error(std::string("model.discriminator.type \"") +
                                 core::choiceName(ckpt.config.model.discriminator.type) +
                                 "\": the reference's discriminator is the frame discriminator");
      weights::loadStateDict(*discr, discr_file, true);
      std::map<std::string, torch::Tensor> discr_state;
      for (auto& [name, tensor] : weights::stateDict(*discr)) discr_state.emplace(name, tensor);
      for (const auto& n : weights::referenceDiscriminatorTensors(*frame))
        out.emplace_back(n.reference, discr_state.at(n.tokenbench).reshape(n.reference_shape));
      discr_note = "discriminator included";
    } catch (const std::exception& e) {
      discr_note = std::string("discriminator left out: ") + e.what();
    }
  } else {
    discr_note = "no discriminator in the checkpoint";
  }

  const bool zero_one = ckpt.config.model.pixel_range == core::PixelRange::ZeroOne;
  const std::map<std::string, std::string> metadata{
      {"format", "magvit2-pytorch VideoTokenizer.state_dict()"},
      {"source", "tokenbench " + core::versionString()},
      {"checkpoint", ckpt.folder.string()},
      {"weights", ckpt.weights},
      {"pixel_range", zero_one ? "[0, 1]" : "[-1, 1]"}};
  try {
    weights::saveTensors(out, args.out, metadata);
    if (!args.config_out.empty())
      core::writeFileAtomically(args.config_out, exported.kwargs.dump(2) + "\n");
  } catch (const std::exception& e) {
    return fail(kExport, e.what(), 1);
  }
  std::cerr << kExport << "wrote " << out.size() << " tensors (" << ckpt.weights << ") to "
            << args.out << "; " << discr_note << "\n";
  if (!zero_one)
    std::cerr << kExport
              << "note: these weights take and give frames in [-1, 1] (model.pixel_range "
                 "minus_one_one); magvit2-pytorch's trainer feeds [0, 1]: give VideoTokenizer "
                 "video * 2 - 1 and map its output back with (recon + 1) / 2\n";
  std::cout << args.out << "\n";
  return 0;
}

}  // namespace tb::trainer::cli
