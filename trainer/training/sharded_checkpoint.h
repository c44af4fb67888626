#pragma once
// Checkpoint files of sharded training (distributed.strategy zero2, zero3): the same files a ddp
// run writes, whose sharded tensors rank 0 receives one unit at a time from every rank and
// writes at their place in the file (core::SafetensorsWriter::declare), so that no rank ever
// holds them all; and their loading into this rank's shares.

#include "trainer/distributed/parameter_shards.h"
#include "trainer/weights/state_dict_io.h"

#include <torch/torch.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tb::trainer {

using weights::NamedTensors;
using FileMetadata = std::map<std::string, std::string>;

/// Whole tensors gathered from ParameterShards: `values` per unit, laid out like its shares
/// (null: the parameters themselves), each parameter's tensor named `<parameter><suffix>`, for
/// the parameters `include` accepts (empty: every one).
struct GatheredSeries {
  const std::vector<torch::Tensor>* values = nullptr;
  std::string suffix;
  std::function<bool(std::size_t)> include;
};

/// Collective: rank 0 (`file` non-null there, null on the others) writes a safetensors file of
/// `whole` (tensors it holds whole, written as they are) and of every series, whose tensors all
/// ranks gather unit by unit. The others first wait for rank 0 without a collective's timeout
/// (RankGroup::awaitRankZero): it may still be writing the file before. Throws what the writer
/// throws (core::SafetensorsError), on rank 0.
void writeGatheredFile(distributed::ParameterShards& shards, const std::filesystem::path* file,
                       const NamedTensors& whole, const std::vector<GatheredSeries>& series,
                       const FileMetadata& metadata);

/// `module`'s weights file, as weights::saveStateDict writes it. Under zero3 (`shards` non-null
/// and sharding the parameters) collective: the sharded parameters are gathered, the other
/// parameters and buffers written as rank 0 holds them. Otherwise rank 0 alone writes.
void writeModelWeights(const torch::nn::Module& module, distributed::ParameterShards* shards,
                       const std::filesystem::path* file, const FileMetadata& metadata);

/// weights::loadStateDict (strict) into `module`; with `shards` (zero2, zero3) this rank keeps
/// its shares of the file's weights. Local: every rank reads the file. Throws
/// weights::WeightsError as loadStateDict does, and then changes no share.
void loadModelWeights(torch::nn::Module& module, distributed::ParameterShards* shards,
                      const std::filesystem::path& file);

/// This rank's shares of `whole`, tensors named after the sharded parameters (an EMA file).
/// Throws std::runtime_error naming a parameter that is missing or of another shape.
std::vector<torch::Tensor> sharesOf(const distributed::ParameterShards& shards,
                                    const NamedTensors& whole);

}  // namespace tb::trainer
