#include "trainer/evaluation/reference_weights.h"

#include "trainer/weights/pickle_reader.h"
#include "trainer/weights/state_dict_io.h"

#include <stdexcept>
#include <utility>
#include <vector>

namespace tb::trainer::metrics {

void loadReferenceWeights(torch::nn::Module& module, const std::string& path,
                          const std::string& network) {
  const weights::PickleRef root = weights::readTorchSave(path);
  if (!root || root->kind != weights::PickleValue::Kind::Dict) {
    throw std::runtime_error(path + ": holds " + (root ? root->describe() : "nothing") +
                             ", not a state dict of " + network);
  }
  // Check every tensor first, so that a bad file leaves the current weights alone.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (destination, source)
  const auto take = [&](const std::string& key, const torch::Tensor& destination) {
    const weights::PickleValue* value = root->find(key);
    if (value == nullptr) throw std::runtime_error(path + ": missing " + key);
    if (value->kind != weights::PickleValue::Kind::Tensor)
      throw std::runtime_error(path + ": " + key + " is a " + value->describe() + ", not a tensor");
    if (value->tensor.sizes() != destination.sizes()) {
      throw std::runtime_error(path + ": " + key + " has shape " +
                               weights::shapeText(value->tensor.sizes()) + ", " + network +
                               " needs " + weights::shapeText(destination.sizes()));
    }
    copies.emplace_back(destination, value->tensor);
  };
  for (const auto& item : module.named_parameters()) take(item.key(), item.value());
  for (const auto& item : module.named_buffers()) take(item.key(), item.value());
  torch::NoGradGuard no_grad;
  for (auto& [destination, source] : copies)
    destination.copy_(source.to(destination.device(), destination.scalar_type()));
}

}  // namespace tb::trainer::metrics
