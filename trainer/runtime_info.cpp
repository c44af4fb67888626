#include "trainer/runtime_info.h"

#include "core/version.h"
#include "trainer/torch_compat.h"

#include <link.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tb::trainer {
namespace {

int collectObject(struct dl_phdr_info* info, size_t, void* data) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') names->emplace_back(info->dlpi_name);
  return 0;
}

}  // namespace

std::string loadedBlasLibrary() {
  std::vector<std::string> names;
  dl_iterate_phdr(collectObject, &names);
  for (const auto& name : names) {
    const std::string base = std::filesystem::path(name).filename().string();
    if (base.find("blas") == std::string::npos && base.find("mkl_rt") == std::string::npos) continue;
    if (base.find("cublas") != std::string::npos) continue;
    std::error_code ec;
    const auto real = std::filesystem::canonical(name, ec);
    return ec ? name : real.string();
  }
  return {};
}

RuntimeInfo queryRuntime() {
  RuntimeInfo info;
  info.torch_version = compat::torchVersion();
  const std::string lib = loadedBlasLibrary();
  const std::string base = std::filesystem::path(lib).filename().string();
  if (lib.empty()) {
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
  info.device = compat::cudaAvailable() ? "cuda:0" : "cpu";
  return info;
}

core::HelloEvent makeHelloEvent(const RuntimeInfo& runtime, int world_size, const std::string& launcher,
                                const std::string& run_dir) {
  core::HelloEvent hello;
  hello.trainer_version = core::versionString();
  hello.torch_version = runtime.torch_version;
  hello.protocol = core::kProtocolVersion;
  hello.world_size = world_size;
  hello.launcher = launcher;
  hello.device = runtime.device;
  hello.blas = runtime.blas;
  hello.threads = runtime.threads;
  hello.interop_threads = runtime.interop_threads;
  hello.run_dir = run_dir;
  return hello;
}

}  // namespace tb::trainer
