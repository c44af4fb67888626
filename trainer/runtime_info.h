#pragma once
// What the trainer runs with: LibTorch version, BLAS library, thread counts, the device (its
// name and memory).
// Reported in the `hello` event and by `--version`.

#include "core/event_protocol.h"

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace tb::trainer {

struct RuntimeInfo {
  std::string torch_version;
  std::string blas;         ///< resolved BLAS library, e.g. "openblas (libopenblasp-r0.3.21.so)"
  bool reference_blas;      ///< true for the slow netlib reference BLAS
  int threads;              ///< intra-op threads (at::get_num_threads)
  int interop_threads;      ///< inter-op threads
  std::string device;       ///< "cpu" or "cuda:N"
  std::string device_name;  ///< "NVIDIA H200", or the CPU's model name
  std::int64_t device_memory_bytes = 0;  ///< the GPU's memory, or the machine's
  std::string cpu;  ///< the CPU's vector and matrix units (CpuFeatures::summary)
};

/// The runtime, training on `device`.
RuntimeInfo queryRuntime(const torch::Device& device = torch::kCPU);

/// "cuda:0 (NVIDIA H200, 139.8 GiB)", "cpu (AMD EPYC 7B13, 23.5 GiB)".
std::string deviceSummary(const RuntimeInfo& runtime);

/// The `hello` event for this process.
core::HelloEvent makeHelloEvent(const RuntimeInfo& runtime, int world_size,
                                const std::string& launcher, const std::string& run_dir);

/// The BLAS shared library this process has loaded, found by walking its loaded objects and
/// resolving Debian's alternatives symlinks. Empty when none is loaded.
std::string loadedBlasLibrary();

/// The most resident memory this process has had so far (its high-water mark), in bytes.
std::int64_t peakResidentBytes();

}  // namespace tb::trainer
