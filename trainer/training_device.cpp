#include "trainer/training_device.h"

#include "trainer/cpu_features.h"

#include "trainer/torch_compat.h"
#include "trainer/torch_compat_c10d.h"

namespace tb::trainer {
namespace {

UserError unavailable(const std::string& key, const std::string& message, const std::string& hint) {
  return UserError("device_unavailable", key + ": " + message, hint);
}

// Fails now, naming the key, when the GPU exists but cannot be used (busy in exclusive-process
// mode, out of memory, a driver error): better than the first training step failing with a
// CUDA error that names nothing of the configuration.
void probe(const torch::Device& device, const std::string& key) {
  try {
    compat::setCurrentDevice(device);
    (void)compat::cudaDeviceInfo(device.index());
    (void)torch::ones({1}, torch::TensorOptions().device(device)).sum().item<float>();
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    throw unavailable(
        key, device.str() + " cannot be used: " + what,
        "free the GPU (nvidia-smi shows who holds it), choose another with train.device, or "
        "train on the CPU (train.device \"cpu\")");
  }
}

// What train.precision "auto" is on `device` (*bf16) and why, in words.
std::string autoPrecisionReason(const torch::Device& device, bool* bf16) {
  if (device.is_cuda()) {
    int major = 0, minor = 0;
    try {
      const auto gpu = compat::cudaDeviceInfo(device.index() < 0 ? 0 : device.index());
      major = gpu.compute_major;
      minor = gpu.compute_minor;
    } catch (const std::exception&) {
    }
    *bf16 = major >= 8;
    return "a GPU of compute capability " + std::to_string(major) + "." + std::to_string(minor) +
           (*bf16 ? " computes bf16" : " has no bf16 units");
  }
  const CpuFeatures& cpu = cpuFeatures();
  *bf16 = cpu.nativeBf16();
  if (!*bf16) return "this CPU has neither AMX-BF16 nor AVX512-BF16";
  return std::string("the CPU computes bf16: ") + (cpu.amx_bf16 ? "AMX-BF16" : "AVX512-BF16");
}

}  // namespace

core::Precision resolvePrecision(core::Precision precision, const torch::Device& device) {
  if (precision != core::Precision::Auto) return precision;
  bool bf16 = false;
  (void)autoPrecisionReason(device, &bf16);
  return bf16 ? core::Precision::Bf16 : core::Precision::Fp32;
}

std::string describePrecision(core::Precision precision, const torch::Device& device) {
  if (precision != core::Precision::Auto) return std::string(core::choiceName(precision));
  bool bf16 = false;
  const std::string why = autoPrecisionReason(device, &bf16);
  return std::string(bf16 ? "bf16" : "fp32") + " (auto: " + why + ")";
}

torch::Device resolveTrainingDevice(const core::TrainConfig& train,
                                    const core::DistributedConfig& distributed,
                                    const distributed::LaunchInfo& launch,
                                    const std::string& setting) {
  const auto spec = core::parseDeviceSpec(train.device);
  if (!spec) {
    throw UserError("config_invalid",
                    setting + " \"" + train.device + "\" is not a device (auto, cpu, cuda, cuda:N)",
                    "set " + setting + " to \"auto\", \"cpu\", \"cuda\" or \"cuda:N\"");
  }
  if (spec->kind == "cpu" || (spec->kind == "auto" && !compat::cudaAvailable())) return torch::kCPU;
  const std::string key = setting + " \"" + train.device + "\"";
  if (!compat::cudaAvailable()) {
    throw unavailable(
        key,
        compat::cudaDeviceCount() == 0 && !TB_WITH_CUDA
            ? "this build of Tokenbench uses a CPU-only LibTorch (" + compat::torchVersion() + ")"
            : "no CUDA device is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)",
        "use the CPU (" + setting +
            " \"cpu\" or \"auto\"), or build against a CUDA LibTorch "
            "(docs/gpu.md)");
  }
  const int count = compat::cudaDeviceCount();
  int index = spec->index;
  std::string where = key;
  if (index < 0) {
    const int local = launch.local_rank;
    if (!distributed.gpu_ids.empty()) {
      if (local >= static_cast<int>(distributed.gpu_ids.size())) {
        throw unavailable("distributed.gpu_ids",
                          "local rank " + std::to_string(local) + " has no entry (" +
                              std::to_string(distributed.gpu_ids.size()) + " listed)",
                          "list one GPU per local rank in distributed.gpu_ids, or leave it empty");
      }
      index = distributed.gpu_ids[static_cast<std::size_t>(local)];
      where = "distributed.gpu_ids[" + std::to_string(local) + "]";
    } else {
      index = local;
      if (launch.local_world_size > count) {
        throw unavailable(
            key,
            std::to_string(launch.local_world_size) + " local ranks but " + std::to_string(count) +
                " GPU(s) visible: one GPU per rank",
            "start at most one rank per GPU, or share one GPU over Gloo with train.device "
            "\"cuda:0\" and distributed.backend \"gloo\"");
      }
    }
  }
  if (index >= count) {
    throw unavailable(where,
                      "there is no cuda:" + std::to_string(index) + " (" + std::to_string(count) +
                          " GPU(s) visible)",
                      "choose a GPU between cuda:0 and cuda:" + std::to_string(count - 1));
  }
  const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  probe(device, where);
  return device;
}

torch::Device resolveTrainingDevice(const core::TrainConfig& train, const std::string& setting) {
  return resolveTrainingDevice(train, core::DistributedConfig{}, distributed::LaunchInfo{},
                               setting);
}

std::string resolveBackend(const core::DistributedConfig& distributed,
                           const torch::Device& device) {
  const core::Backend backend = distributed.backend;
  if (backend == core::Backend::Gloo) return "gloo";
  if (backend == core::Backend::Auto)
    return device.is_cuda() && compat::ncclAvailable() ? "nccl" : "gloo";
  if (!device.is_cuda()) {
    throw UserError(
        "backend_unsupported",
        "distributed.backend \"nccl\" needs CUDA tensors, but this rank trains on " + device.str(),
        "set distributed.backend to \"gloo\" (or \"auto\"), or train on CUDA (train.device)");
  }
  if (!compat::ncclAvailable()) {
    throw UserError(
        "backend_unsupported",
        "distributed.backend \"nccl\": this LibTorch (" + compat::torchVersion() + ") has no NCCL",
        "set distributed.backend to \"gloo\" (or \"auto\")");
  }
  return "nccl";
}

}  // namespace tb::trainer
