#pragma once
// Copying another project's state dict into a Tokenbench module by a name map: what the import
// commands (magvit2-pytorch, taming-transformers, LlamaGen) share.

#include "trainer/weights/magvit2_names.h"
#include "trainer/weights/pickle_reader.h"
#include "trainer/weights/state_dict_io.h"

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tb::trainer::weights {

/// The tensors of a pickled state dict (a Dict of string keys), in file order. Throws PickleError
/// naming `path` and the entry for a key that is not a string or a value that is not a tensor.
NamedTensors stateDictTensors(const PickleValue& dict, const std::filesystem::path& path);

/// Copies the tensors of `file` named by `names` into `module`. Every reference name taken goes
/// into `used`; every tensor `file` lacks or holds in another shape is one line of `problems`
/// ("not in the file: NAME [shape] (Tokenbench NAME)", "shape differs: NAME [a] in the file, [b]
/// expected (Tokenbench NAME)"), in the order of `names`.
void fillFromReference(torch::nn::Module& module, const std::vector<ReferenceTensor>& names,
                       const std::map<std::string, torch::Tensor>& file,
                       std::set<std::string>& used, std::vector<std::string>& problems);

}  // namespace tb::trainer::weights
