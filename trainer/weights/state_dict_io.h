#pragma once
// Module weights <-> safetensors files (loadable in Python with safetensors.torch.load_file).
//
// Tensor names are LibTorch's dotted module paths, exactly as named_parameters() and
// named_buffers() produce them ("encoder_layers.0.conv.conv.weight"): parameters first, then
// buffers; the writer stores them sorted (see core::SafetensorsWriter), so files are identical for
// identical weights. Tensors are written contiguous, on the CPU, in their own dtype.

#include "core/safetensors.h"

#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer::weights {

/// A tensor that cannot be converted, or a file whose tensors do not fit the module. The message
/// names the tensor and the file.
class WeightsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

/// torch dtype -> safetensors dtype (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL); throws
/// WeightsError for others (complex, quantized).
core::DType toSafetensorsDType(torch::ScalarType type);
/// safetensors dtype -> torch dtype; throws WeightsError for F8_*, U16, U32, U64 (no LibTorch 1.13
/// type).
torch::ScalarType toTorchDType(core::DType type);

/// Parameters then buffers of `module`, recursively, with their dotted names.
NamedTensors stateDict(const torch::nn::Module& module);

/// "[2, 3, 4]": a shape as error messages write it.
std::string shapeText(c10::IntArrayRef shape);

/// Adds one tensor (copied to a contiguous CPU tensor first).
void addTensor(core::SafetensorsWriter& writer, const std::string& name,
               const torch::Tensor& tensor);
/// A CPU tensor owning a copy of `info`'s bytes.
torch::Tensor readTensor(const core::SafetensorsFile& file, const core::TensorInfo& info);

/// Writes tensors atomically to `path` with string metadata.
void saveTensors(const NamedTensors& tensors, const std::filesystem::path& path,
                 const std::map<std::string, std::string>& metadata = {});
/// Every tensor of a file, in file (offset) order.
NamedTensors loadTensors(const std::filesystem::path& path);

/// saveTensors(stateDict(module), ...).
void saveStateDict(const torch::nn::Module& module, const std::filesystem::path& path,
                   const std::map<std::string, std::string>& metadata = {});

/// Names that did not line up in a non-strict load.
struct LoadReport {
  std::vector<std::string> missing;     ///< in the module, not in the file (left as they were)
  std::vector<std::string> unexpected;  ///< in the file, not in the module (ignored)
};

/// The tensors of `path`, which must be exactly those of `expected` (by name), each with the
/// dtype and shape of its namesake there, plus any of `optional` the file has (as stored, after
/// the expected ones). Throws WeightsError naming the file and the tensors missing, unexpected
/// or mismatched. For state a resume restores whole (EMA weights, RNG).
NamedTensors loadExpectedTensors(const std::filesystem::path& path, const NamedTensors& expected,
                                 const std::vector<std::string>& optional = {});

/// Copies the file's tensors into the module's parameters and buffers (on their devices), without
/// recording gradients. A shape or dtype mismatch always throws WeightsError naming the tensor,
/// both shapes/dtypes and the file; with `strict`, so do missing and unexpected names (all listed).
LoadReport loadStateDict(torch::nn::Module& module, const std::filesystem::path& path,
                         bool strict = true);

}  // namespace tb::trainer::weights
