#include "trainer/weights/reference_fill.h"

namespace tb::trainer::weights {

NamedTensors stateDictTensors(const PickleValue& dict, const std::filesystem::path& path) {
  NamedTensors out;
  for (const auto& [key, value] : dict.entries) {
    if (key->kind != PickleValue::Kind::String || value->kind != PickleValue::Kind::Tensor)
      throw PickleError(
          path.string() + ": state dict entry " +
          (key->kind == PickleValue::Kind::String ? "'" + key->text + "'" : key->describe()) +
          " is a " + value->describe() + ", not a tensor");
    out.emplace_back(key->text, value->tensor);
  }
  return out;
}

void fillFromReference(torch::nn::Module& module, const std::vector<ReferenceTensor>& names,
                       const std::map<std::string, torch::Tensor>& file,
                       std::set<std::string>& used, std::vector<std::string>& problems) {
  std::map<std::string, torch::Tensor> targets;
  for (auto& [name, tensor] : stateDict(module)) targets.emplace(name, tensor);
  torch::NoGradGuard no_grad;
  for (const auto& n : names) {
    const auto it = file.find(n.reference);
    if (it == file.end()) {
      problems.push_back("not in the file: " + n.reference + " " + shapeText(n.reference_shape) +
                         " (Tokenbench " + n.tokenbench + ")");
      continue;
    }
    used.insert(n.reference);
    if (it->second.sizes().vec() != n.reference_shape) {
      problems.push_back("shape differs: " + n.reference + " " + shapeText(it->second.sizes()) +
                         " in the file, " + shapeText(n.reference_shape) +
                         " expected (Tokenbench " + n.tokenbench + ")");
      continue;
    }
    targets.at(n.tokenbench).copy_(it->second.reshape(n.tokenbench_shape));
  }
}

}  // namespace tb::trainer::weights
