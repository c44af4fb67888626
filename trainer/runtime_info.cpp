#include "trainer/runtime_info.h"

#include "core/version.h"
#include "trainer/cpu_features.h"
#include "trainer/torch_compat.h"

#include <ATen/Version.h>

#include <link.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tb::trainer {
namespace {

int collectObject(struct dl_phdr_info* info, size_t, void* data) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
    names->emplace_back(info->dlpi_name);
  return 0;
}

// "model name : AMD EPYC 7B13" of /proc/cpuinfo; empty when there is none.
std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto begin = line.find_first_not_of(" \t", colon + 1);
    return begin == std::string::npos ? std::string() : line.substr(begin);
  }
  return {};
}

// BLAS_INFO of LibTorch's build settings: "mkl" in the PyTorch wheels, "generic" (whatever
// libblas.so.3 is) in Debian's.
std::string builtInBlas() {
  const std::string config = at::show_config();
  const std::string key = "BLAS_INFO=";
  const auto begin = config.find(key);
  if (begin == std::string::npos) return {};
  const auto end = config.find_first_of(", \n", begin + key.size());
  return config.substr(begin + key.size(), end - begin - key.size());
}

}  // namespace

std::string loadedBlasLibrary() {
  std::vector<std::string> names;
  dl_iterate_phdr(collectObject, &names);
  for (const auto& name : names) {
    const std::string base = std::filesystem::path(name).filename().string();
    if (base.find("blas") == std::string::npos && base.find("mkl_rt") == std::string::npos)
      continue;
    if (base.find("cublas") != std::string::npos) continue;
    std::error_code ec;
    const auto real = std::filesystem::canonical(name, ec);
    return ec ? name : real.string();
  }
  return {};
}

RuntimeInfo queryRuntime(const torch::Device& device) {
  RuntimeInfo info;
  info.torch_version = compat::torchVersion();
  const std::string lib = loadedBlasLibrary();
  const std::string base = std::filesystem::path(lib).filename().string();
  if (builtInBlas() == "mkl" && lib.find("mkl") == std::string::npos) {
    // The PyTorch wheels link MKL statically into libtorch_cpu; a libblas loaded beside it (by
    // OpenCV, say) is not what LibTorch calls.
    info.blas = "mkl (inside LibTorch)";
  } else if (lib.empty()) {
    info.blas = "none found";
  } else if (lib.find("openblas") != std::string::npos) {
    info.blas = "openblas (" + base + ")";
  } else if (lib.find("mkl") != std::string::npos) {
    info.blas = "mkl (" + base + ")";
  } else if (lib.find("blis") != std::string::npos) {
    info.blas = "blis (" + base + ")";
  } else {
    info.blas = "reference (" + lib + ")";
  }
  info.reference_blas = info.blas.rfind("reference", 0) == 0;
  info.threads = at::get_num_threads();
  info.interop_threads = at::get_num_interop_threads();
  info.device = device.str();
  info.cpu = cpuFeatures().summary();
  if (device.is_cuda()) {
    try {
      const compat::CudaDeviceInfo gpu =
          compat::cudaDeviceInfo(device.index() < 0 ? 0 : device.index());
      info.device_name = gpu.name;
      info.device_memory_bytes = gpu.total_bytes;
    } catch (const std::exception&) {
      info.device_name = "unknown GPU";
    }
  } else {
    info.device_name = cpuModelName();
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) info.device_memory_bytes = static_cast<std::int64_t>(pages) * page;
  }
  return info;
}

std::string deviceSummary(const RuntimeInfo& runtime) {
  char memory[32] = "";
  if (runtime.device_memory_bytes > 0) {
    std::snprintf(memory, sizeof memory, ", %.1f GiB",
                  static_cast<double>(runtime.device_memory_bytes) / (1024.0 * 1024.0 * 1024.0));
  }
  return runtime.device + " (" + (runtime.device_name.empty() ? "unknown" : runtime.device_name) +
         memory + ")";
}

core::HelloEvent makeHelloEvent(const RuntimeInfo& runtime, int world_size,
                                const std::string& launcher, const std::string& run_dir) {
  core::HelloEvent hello;
  hello.trainer_version = core::versionString();
  hello.torch_version = runtime.torch_version;
  hello.protocol = core::kProtocolVersion;
  hello.world_size = world_size;
  hello.launcher = launcher;
  hello.device = runtime.device;
  hello.device_name = runtime.device_name;
  hello.device_memory_bytes = runtime.device_memory_bytes;
  hello.cpu = runtime.cpu;
  hello.blas = runtime.blas;
  hello.threads = runtime.threads;
  hello.interop_threads = runtime.interop_threads;
  hello.run_dir = run_dir;
  return hello;
}

std::int64_t peakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace tb::trainer
