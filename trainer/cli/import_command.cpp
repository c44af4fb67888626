#include "trainer/cli/import_command.h"

#include "core/checkpoint_files.h"
#include "core/config_io.h"
#include "core/version.h"
#include "core/yaml_subset.h"
#include "trainer/cli/magvit2_commands.h"
#include "trainer/cli/model_commands.h"
#include "trainer/weights/public_vq.h"
#include "trainer/weights/reference_fill.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <set>

namespace tb::trainer::cli {
namespace fs = std::filesystem;
namespace {

using Json = nlohmann::json;
using weights::PickleValue;
using weights::PublicVqFormat;

constexpr const char* kCommand = "tokenbench-trainer import: ";

/// A refusal the user can act on (exit 2).
class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writing the checkpoint folder failed (exit 1).
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The state dict a checkpoint file holds and what else it holds.
struct SourceFile {
  weights::NamedTensors tensors;  ///< in file order
  std::string entry;              ///< the top-level key they came from ("" for a bare state dict)
  std::vector<std::string> other_entries;  ///< top-level keys left aside
};

SourceFile readSource(const fs::path& path, PublicVqFormat format) {
  const weights::PickleRef root = weights::readTorchSave(path);
  if (root->kind != PickleValue::Kind::Dict)
    throw ImportError(path.string() + ": holds a " + root->describe() + ", not a dict");
  const std::vector<std::string> candidates =
      format == PublicVqFormat::Taming ? std::vector<std::string>{"state_dict"}
                                       : std::vector<std::string>{"ema", "model", "state_dict"};
  SourceFile file;
  for (const auto& key : candidates) {
    const PickleValue* value = root->find(key);
    if (!value) continue;
    if (value->kind != PickleValue::Kind::Dict)
      throw ImportError(path.string() + ": \"" + key + "\" is a " + value->describe() +
                        ", not a state dict");
    file.entry = key;
    file.tensors = weights::stateDictTensors(*value, path);
    break;
  }
  if (file.entry.empty()) {
    // A bare state dict: every key a string, every value a tensor.
    const bool bare = !root->entries.empty() &&
                      std::all_of(root->entries.begin(), root->entries.end(), [](const auto& e) {
                        return e.first->kind == PickleValue::Kind::String &&
                               e.second->kind == PickleValue::Kind::Tensor;
                      });
    if (!bare) {
      std::string keys;
      for (const auto& [k, v] : root->entries)
        keys += (keys.empty() ? "" : ", ") +
                (k->kind == PickleValue::Kind::String ? k->text : k->describe());
      std::string wanted;
      for (const auto& c : candidates) wanted += (wanted.empty() ? "\"" : " or \"") + c + "\"";
      throw ImportError(path.string() + ": no " + wanted + " entry (it holds " + keys + ")");
    }
    file.tensors = weights::stateDictTensors(*root, path);
    return file;
  }
  for (const auto& [k, v] : root->entries)
    if (!(k->kind == PickleValue::Kind::String && k->text == file.entry))
      file.other_entries.push_back(k->kind == PickleValue::Kind::String ? k->text : k->describe());
  return file;
}

Json readJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw ImportError(path.string() + ": cannot open");
  try {
    return Json::parse(in);
  } catch (const Json::parse_error& e) {
    throw ImportError(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

/// "taming vqgan_imagenet_f16_16384" from .../vqgan_imagenet_f16_16384/checkpoints/last.ckpt.
std::string defaultName(const std::string& prefix, const fs::path& weights) {
  fs::path folder = weights.parent_path();
  std::string stem = weights.stem().string();
  const bool generic = stem == "last" || stem == "model" || stem == "checkpoint" ||
                       stem.rfind("epoch=", 0) == 0 || stem.rfind("step=", 0) == 0;
  if (generic && !folder.empty()) {
    if (folder.filename() == "checkpoints" && folder.has_parent_path())
      folder = folder.parent_path();
    if (!folder.filename().empty() && folder.filename() != ".") stem = folder.filename().string();
  }
  return prefix + " " + stem;
}

weights::PublicVqConfig readConfig(const ImportArgs& args, PublicVqFormat format,
                                   const std::map<std::string, torch::Tensor>& state) {
  if (format == PublicVqFormat::Taming) {
    if (args.config.empty())
      throw ImportError(
          "--format taming needs --config: the model's YAML (configs/model.yaml "
          "beside checkpoints/last.ckpt)");
    if (!args.model.empty()) throw ImportError("--model is for --format llamagen");
    const fs::path path(args.config);
    Json yaml;
    try {
      yaml = path.extension() == ".json" ? readJson(path) : core::readYamlSubsetFile(path);
    } catch (const core::YamlError& e) {
      throw ImportError(e.what());
    }
    return weights::tamingConfig(yaml, args.config);
  }
  if (!args.config.empty() && !args.model.empty())
    throw ImportError("give --config ARGS.json or --model VQ-16|VQ-8, not both");
  if (!args.config.empty())
    return weights::llamagenConfig(readJson(args.config), args.config, state);
  if (args.model.empty())
    throw ImportError(
        "--format llamagen needs --model VQ-16|VQ-8 (the released "
        "vq_ds16_c2i.pt / vq_ds8_c2i.pt) or --config ARGS.json");
  try {
    return weights::llamagenNamedConfig(args.model, state);
  } catch (const std::invalid_argument& e) {
    throw ImportError(e.what());
  }
}

/// Reads, maps and writes; throws ImportError for what the user can fix.
void importPublicVq(const ImportArgs& args, PublicVqFormat format) {
  const fs::path weights_path(args.weights);
  SourceFile source;
  try {
    source = readSource(weights_path, format);
  } catch (const weights::PickleError& e) {
    throw ImportError(e.what());
  }
  std::map<std::string, torch::Tensor> state(source.tensors.begin(), source.tensors.end());
  weights::PublicVqConfig read;
  try {
    read = readConfig(args, format, state);
  } catch (const ImportError&) {
    throw;
  } catch (const std::runtime_error& e) {  // a field of the configuration, named
    throw ImportError(e.what());
  }
  core::RunConfig& config = read.config;
  const std::string config_name = args.config.empty() ? "--model " + args.model : args.config;
  if (const auto errors = core::validate(config); !errors.empty()) {
    std::string message = config_name + " gives a model Tokenbench cannot build:";
    for (const auto& e : errors) message += "\n  " + e.toString();
    throw ImportError(message);
  }
  std::shared_ptr<Tokenizer> tokenizer;
  try {
    tokenizer = makeTokenizer(config.model, config.data);
  } catch (const std::invalid_argument& e) {
    throw ImportError(config_name + ": " + e.what());
  }
  const auto& vqgan = dynamic_cast<const VqganTokenizerImpl&>(*tokenizer);

  std::set<std::string> used;
  std::vector<std::string> problems;
  const std::vector<weights::ReferenceTensor> names = weights::publicVqTensors(vqgan, format);
  weights::fillFromReference(*tokenizer, names, state, used, problems);
  // The first tensor of the file (in its order) whose shape differs says most about a wrong
  // configuration: it is named first.
  std::map<std::string, std::vector<std::int64_t>> expected;
  for (const auto& n : names) expected.emplace(n.reference, n.reference_shape);
  std::string first_mismatch;
  for (const auto& [name, tensor] : source.tensors) {
    const auto it = expected.find(name);
    if (it == expected.end() || tensor.sizes().vec() == it->second) continue;
    first_mismatch = name + " " + weights::shapeText(tensor.sizes()) + " in the file, " +
                     weights::shapeText(it->second) + " expected";
    break;
  }
  std::map<std::string, int> skipped;  // role -> tensors
  for (const auto& [name, tensor] : source.tensors) {
    if (used.count(name)) continue;
    if (const std::string role = weights::skippedRole(format, name); !role.empty()) {
      ++skipped[role];
      continue;
    }
    problems.push_back("no place in Tokenbench: " + name + " " +
                       weights::shapeText(tensor.sizes()));
  }
  if (!problems.empty()) {
    std::string message = config_name + " does not describe the weights of " + args.weights;
    if (!first_mismatch.empty()) message += "; the first tensor that differs: " + first_mismatch;
    message += "\n" + std::to_string(problems.size()) + " difference(s):";
    for (const auto& p : problems) message += "\n  " + p;
    throw ImportError(message);
  }

  const std::string format_text = format == PublicVqFormat::Taming
                                      ? "taming-transformers VQModel (PyTorch Lightning .ckpt)"
                                      : "LlamaGen VQModel (torch.save)";
  const std::string name =
      args.name.empty()
          ? defaultName(format == PublicVqFormat::Taming ? "taming" : "LlamaGen", weights_path)
          : args.name;
  const std::map<std::string, std::string> metadata{
      {"format", "tokenbench"},
      {"tokenbench_version", core::versionString()},
      {"model_kind", core::choiceName(config.model.kind)},
      {"imported_from", args.weights},
      {"imported_format", format_text},
      {core::checkpoint_files::kSourceNameKey, name}};
  for (const auto& note : read.notes) std::cerr << kCommand << "note: " << note << "\n";
  if (!source.entry.empty())
    std::cerr << kCommand << "took \"" << source.entry << "\" (" << source.tensors.size()
              << " tensors)";
  else
    std::cerr << kCommand << "read a bare state dict (" << source.tensors.size() << " tensors)";
  if (!source.other_entries.empty()) {
    std::cerr << "; left aside: ";
    for (std::size_t i = 0; i < source.other_entries.size(); ++i)
      std::cerr << (i ? ", " : "") << source.other_entries[i];
  }
  std::cerr << "\n";
  for (const auto& [role, count] : skipped)
    std::cerr << kCommand << "skipped " << count << " tensor(s) of " << role << "\n";
  try {
    writeCheckpointFolder(args.out, config, weights::stateDict(*tokenizer), {}, metadata);
  } catch (const std::exception& e) {
    throw WriteError(e.what());
  }
  const auto& q = config.model.quantizer;
  const auto grid = tokenizer->tokenGrid(1, config.data.image_size);
  std::cerr << kCommand << "imported \"" << name << "\": " << used.size() << " tensors, "
            << countParameters(*tokenizer) << " parameters; " << q.codebook_size << " codes x "
            << q.codebook_dim << (q.vq_l2_normalize ? " (l2-normalised lookup)" : "") << ", "
            << grid[1] << "x" << grid[2] << " tokens for " << config.data.image_size << "x"
            << config.data.image_size << " images\n";
}

}  // namespace

int importCheckpoint(const ImportArgs& args) {
  if (args.format == "magvit2") {
    if (!args.model.empty()) {
      std::cerr << kCommand << "--model is for --format llamagen\n";
      return 2;
    }
    return importMagvit2({args.weights, args.config, args.out, args.name});
  }
  PublicVqFormat format;
  if (args.format == "taming") {
    format = PublicVqFormat::Taming;
  } else if (args.format == "llamagen") {
    format = PublicVqFormat::LlamaGen;
  } else {
    std::cerr << kCommand << "--format \"" << args.format
              << "\": must be one of magvit2, taming, llamagen\n";
    return 2;
  }
  std::error_code ec;
  if (fs::exists(args.out, ec)) {
    std::cerr << kCommand << args.out << " already exists\n";
    return 2;
  }
  try {
    importPublicVq(args, format);
  } catch (const ImportError& e) {
    std::cerr << kCommand << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << kCommand << e.what() << "\n";
    return 1;
  }
  std::cout << args.out << "\n";
  return 0;
}

}  // namespace tb::trainer::cli
