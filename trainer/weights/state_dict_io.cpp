#include "trainer/weights/state_dict_io.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

namespace tb::trainer::weights {
std::string shapeText(c10::IntArrayRef shape) {
  std::ostringstream s;
  s << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

core::DType toSafetensorsDType(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat64:
      return core::DType::F64;
    case torch::kFloat32:
      return core::DType::F32;
    case torch::kFloat16:
      return core::DType::F16;
    case torch::kBFloat16:
      return core::DType::BF16;
    case torch::kInt64:
      return core::DType::I64;
    case torch::kInt32:
      return core::DType::I32;
    case torch::kInt16:
      return core::DType::I16;
    case torch::kInt8:
      return core::DType::I8;
    case torch::kUInt8:
      return core::DType::U8;
    case torch::kBool:
      return core::DType::Bool;
    default:
      break;
  }
  throw WeightsError(std::string("no safetensors dtype for torch dtype ") + c10::toString(type));
}

torch::ScalarType toTorchDType(core::DType type) {
  switch (type) {
    case core::DType::F64:
      return torch::kFloat64;
    case core::DType::F32:
      return torch::kFloat32;
    case core::DType::F16:
      return torch::kFloat16;
    case core::DType::BF16:
      return torch::kBFloat16;
    case core::DType::I64:
      return torch::kInt64;
    case core::DType::I32:
      return torch::kInt32;
    case core::DType::I16:
      return torch::kInt16;
    case core::DType::I8:
      return torch::kInt8;
    case core::DType::U8:
      return torch::kUInt8;
    case core::DType::Bool:
      return torch::kBool;
    default:
      break;
  }
  throw WeightsError("safetensors dtype " + std::string(core::dtypeName(type)) +
                     " has no LibTorch 1.13 equivalent");
}

NamedTensors stateDict(const torch::nn::Module& module) {
  NamedTensors out;
  for (const auto& p : module.named_parameters(true)) out.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers(true)) out.emplace_back(b.key(), b.value());
  return out;
}

void addTensor(core::SafetensorsWriter& writer, const std::string& name,
               const torch::Tensor& tensor) {
  TORCH_CHECK(tensor.defined(), "tensor '", name, "' is undefined");
  const auto cpu = tensor.detach().to(torch::kCPU).contiguous();
  const std::vector<std::int64_t> shape(cpu.sizes().begin(), cpu.sizes().end());
  const auto bytes = static_cast<std::size_t>(cpu.numel()) * cpu.element_size();
  try {
    writer.add(name, toSafetensorsDType(cpu.scalar_type()), shape, cpu.data_ptr(), bytes);
  } catch (const WeightsError& e) {
    throw WeightsError("tensor '" + name + "': " + e.what());
  }
}

torch::Tensor readTensor(const core::SafetensorsFile& file, const core::TensorInfo& info) {
  auto t = torch::empty(info.shape, torch::TensorOptions().dtype(toTorchDType(info.dtype)));
  const auto bytes = file.data(info);
  TORCH_CHECK(bytes.size() == static_cast<std::size_t>(t.numel()) * t.element_size(),
              "size mismatch for ", info.name);
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

void saveTensors(const NamedTensors& tensors, const std::filesystem::path& path,
                 const std::map<std::string, std::string>& metadata) {
  core::SafetensorsWriter writer;
  for (const auto& [k, v] : metadata) writer.setMetadata(k, v);
  for (const auto& [name, t] : tensors) addTensor(writer, name, t);
  writer.writeFile(path);
}

NamedTensors loadTensors(const std::filesystem::path& path) {
  const auto file = core::SafetensorsFile::read(path);
  NamedTensors out;
  for (const auto& info : file.tensors()) {
    try {
      out.emplace_back(info.name, readTensor(file, info));
    } catch (const WeightsError& e) {
      throw WeightsError(path.string() + ": tensor '" + info.name + "': " + e.what());
    }
  }
  return out;
}

void saveStateDict(const torch::nn::Module& module, const std::filesystem::path& path,
                   const std::map<std::string, std::string>& metadata) {
  saveTensors(stateDict(module), path, metadata);
}

namespace {

// Throws WeightsError unless the file's entry for `target` has its shape and dtype.
void checkMatches(const std::filesystem::path& path, const core::TensorInfo& info,
                  const torch::Tensor& target, const char* owner) {
  torch::ScalarType type;
  try {
    type = toTorchDType(info.dtype);
  } catch (const WeightsError& e) {
    throw WeightsError(path.string() + ": tensor '" + info.name + "': " + e.what());
  }
  if (c10::IntArrayRef(info.shape) != target.sizes())
    throw WeightsError(path.string() + ": tensor '" + info.name + "': shape " +
                       shapeText(info.shape) + " in the file, " + shapeText(target.sizes()) +
                       " in the " + owner);
  if (type != target.scalar_type())
    throw WeightsError(path.string() + ": tensor '" + info.name + "': dtype " +
                       std::string(core::dtypeName(info.dtype)) + " in the file, " +
                       c10::toString(target.scalar_type()) + " in the " + owner);
}

// Names of `expected` missing from `file`, and names of `file` not in `expected`.
LoadReport compareNames(const core::SafetensorsFile& file, const NamedTensors& expected) {
  LoadReport report;
  std::set<std::string> known;
  for (const auto& [name, target] : expected) {
    known.insert(name);
    if (!file.find(name)) report.missing.push_back(name);
  }
  for (const auto& info : file.tensors())
    if (!known.count(info.name)) report.unexpected.push_back(info.name);
  return report;
}

void throwMismatch(const std::filesystem::path& path, const LoadReport& report, const char* what) {
  std::ostringstream s;
  s << path.string() << ": " << what << ":";
  for (const auto& n : report.missing) s << " missing '" << n << "';";
  for (const auto& n : report.unexpected) s << " unexpected '" << n << "';";
  throw WeightsError(s.str());
}

}  // namespace

NamedTensors loadExpectedTensors(const std::filesystem::path& path, const NamedTensors& expected,
                                 const std::vector<std::string>& optional) {
  const auto file = core::SafetensorsFile::read(path);
  LoadReport report = compareNames(file, expected);
  const auto is_optional = [&](const std::string& name) {
    return std::find(optional.begin(), optional.end(), name) != optional.end();
  };
  report.unexpected.erase(
      std::remove_if(report.unexpected.begin(), report.unexpected.end(), is_optional),
      report.unexpected.end());
  if (!report.missing.empty() || !report.unexpected.empty()) {
    throwMismatch(path, report, "tensors are not the ones expected");
  }
  NamedTensors out;
  for (const auto& [name, target] : expected) {
    const core::TensorInfo& info = *file.find(name);
    checkMatches(path, info, target, "run");
    out.emplace_back(name, readTensor(file, info));
  }
  for (const auto& name : optional) {
    if (const core::TensorInfo* info = file.find(name))
      out.emplace_back(name, readTensor(file, *info));
  }
  return out;
}

LoadReport loadStateDict(torch::nn::Module& module, const std::filesystem::path& path,
                         bool strict) {
  const auto file = core::SafetensorsFile::read(path);
  auto targets = stateDict(module);
  for (auto& [name, target] : targets) {
    if (const auto* info = file.find(name)) checkMatches(path, *info, target, "model");
  }
  const LoadReport report = compareNames(file, targets);
  if (strict && (!report.missing.empty() || !report.unexpected.empty())) {
    throwMismatch(path, report, "weights do not match the model");
  }
  torch::NoGradGuard no_grad;
  for (auto& [name, target] : targets) {
    const auto* info = file.find(name);
    if (info) target.copy_(readTensor(file, *info).to(target.device()));
  }
  return report;
}

}  // namespace tb::trainer::weights
