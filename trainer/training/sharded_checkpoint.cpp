#include "trainer/training/sharded_checkpoint.h"

#include <map>
#include <set>
#include <stdexcept>

namespace tb::trainer {

void writeGatheredFile(distributed::ParameterShards& shards, const std::filesystem::path* file,
                       const NamedTensors& whole, const std::vector<GatheredSeries>& series,
                       const FileMetadata& metadata) {
  const auto included = [](const GatheredSeries& s, std::size_t k) {
    return !s.include || s.include(k);
  };
  // Every rank gathers every series; rank 0 puts each parameter's tensor into the file. Rank 0
  // may still be busy with the file before (a whole model under zero2, an fsync): the others
  // wait for it as long as its heartbeat goes on, not inside a collective that times out.
  auto gather = [&](const core::SafetensorsWriter::Put* put) {
    if (put != nullptr) {
      shards.group().arrive("gathered file");
    } else {
      shards.group().awaitRankZero("gathered file");
    }
    for (const GatheredSeries& s : series) {
      shards.gatherWhole(
          s.values,
          [&](std::size_t k, const torch::Tensor& tensor) {
            if (put == nullptr) return;
            const torch::Tensor cpu = tensor.to(torch::kCPU).contiguous();
            (*put)(shards.names()[k] + s.suffix, cpu.data_ptr(),
                   static_cast<std::size_t>(cpu.numel()) * cpu.element_size());
          },
          s.include);
    }
  };
  if ((file != nullptr) != (shards.group().rank() == 0)) {
    throw std::logic_error("writeGatheredFile: rank 0, and only rank 0, writes the file");
  }
  if (file == nullptr) {
    gather(nullptr);
    return;
  }
  core::SafetensorsWriter writer;
  for (const auto& [key, value] : metadata) writer.setMetadata(key, value);
  for (const auto& [name, tensor] : whole) weights::addTensor(writer, name, tensor);
  for (const GatheredSeries& s : series) {
    for (std::size_t k = 0; k < shards.names().size(); ++k) {
      if (included(s, k)) {
        writer.declare(shards.names()[k] + s.suffix, weights::toSafetensorsDType(shards.dtype(k)),
                       shards.shape(k));
      }
    }
  }
  writer.writeFile(*file, [&](const core::SafetensorsWriter::Put& put) { gather(&put); });
}

void writeModelWeights(const torch::nn::Module& module, distributed::ParameterShards* shards,
                       const std::filesystem::path* file, const FileMetadata& metadata) {
  if (shards == nullptr || shards->stage() != distributed::ParameterShards::Stage::Zero3) {
    if (file != nullptr) weights::saveStateDict(module, *file, metadata);
    return;
  }
  NamedTensors whole;
  if (file != nullptr) {
    const std::set<std::string> sharded(shards->names().begin(), shards->names().end());
    for (auto& [name, tensor] : weights::stateDict(module)) {
      if (sharded.count(name) == 0) whole.emplace_back(name, tensor);
    }
  }
  writeGatheredFile(*shards, file, whole, {GatheredSeries{}}, metadata);
}

void loadModelWeights(torch::nn::Module& module, distributed::ParameterShards* shards,
                      const std::filesystem::path& file) {
  if (shards == nullptr) {
    weights::loadStateDict(module, file, true);
    return;
  }
  shards->updateFromWhole([&] { weights::loadStateDict(module, file, true); });
}

std::vector<torch::Tensor> sharesOf(const distributed::ParameterShards& shards,
                                    const NamedTensors& whole) {
  const std::map<std::string, torch::Tensor> byName(whole.begin(), whole.end());
  return shards.scatterWhole([&](std::size_t k) {
    const std::string& name = shards.names()[k];
    const auto it = byName.find(name);
    if (it == byName.end()) throw std::runtime_error("no tensor '" + name + "'");
    if (c10::IntArrayRef(shards.shape(k)) != it->second.sizes()) {
      throw std::runtime_error("tensor '" + name + "' has shape " + c10::str(it->second.sizes()) +
                               ", the parameter " + c10::str(c10::IntArrayRef(shards.shape(k))));
    }
    return it->second;
  });
}

}  // namespace tb::trainer
