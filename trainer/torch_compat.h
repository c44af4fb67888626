#pragma once
// Every LibTorch call whose API differs between 1.13 (Debian, CPU only) and 2.x (the wheels on
// GPU machines, with CUDA), or that exists only in CUDA builds, goes through here, so one tree
// compiles against both. The c10d half (stores, process groups, work handles) is in
// torch_compat_c10d.h, so that only the distributed code pays for its headers.
//
// CUDA functions are safe to call in a CPU-only build: they report no device, or throw
// std::runtime_error saying the build has no CUDA.

#include "trainer/torch_compat_version.h"

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tb::trainer::compat {

/// "1.13.1"
std::string torchVersion();

// --- CUDA devices -------------------------------------------------------------------------

/// Whether this LibTorch has CUDA and at least one device is visible.
bool cudaAvailable();
/// Visible CUDA devices; 0 in a CPU-only build.
int cudaDeviceCount();

struct CudaDeviceInfo {
  std::string name;              ///< e.g. "NVIDIA H200"
  std::int64_t total_bytes = 0;  ///< the device's memory
  std::int64_t free_bytes = 0;   ///< free now, as the driver reports it
  int compute_major = 0, compute_minor = 0;
  std::string bus_id;  ///< PCI bus id, e.g. "0000:3B:00.0": the same GPU whatever its index
};
/// Properties of device `index`; throws std::runtime_error without CUDA or for a bad index.
CudaDeviceInfo cudaDeviceInfo(int index);

/// Makes `device` the current CUDA device of this thread (kernels, NCCL); no-op for the CPU.
void setCurrentDevice(const torch::Device& device);
/// Waits for every kernel queued on `device`; no-op for the CPU.
void synchronize(const torch::Device& device);
/// cuDNN picks the fastest algorithm per shape (benchmark mode); no-op without cuDNN.
void setCudnnBenchmark(bool on);
/// The cuDNN this process has loaded, e.g. "9.19.0" (what runs, whatever the headers were);
/// empty when none is loaded.
std::string cudnnVersion();
/// The CUDA runtime this build runs with, e.g. "13.0"; empty without CUDA.
std::string cudaRuntimeVersion();
/// Peak bytes the caching allocator handed out on `device` since the last reset; 0 for the CPU.
std::int64_t peakAllocatedBytes(const torch::Device& device);
void resetPeakAllocated(const torch::Device& device);

/// `tensor` in page-locked host memory when CUDA is available (so a copy to the GPU can be
/// asynchronous), else `tensor` itself.
torch::Tensor pinned(const torch::Tensor& tensor);

/// Default generator state of CUDA device `index` (a uint8 CPU tensor); undefined without CUDA.
torch::Tensor cudaRngState(int index);
/// Restores what cudaRngState returned; no-op without CUDA.
void setCudaRngState(int index, const torch::Tensor& state);

/// Measures device time between start() and stop(): CUDA events on a CUDA device (no host
/// synchronisation until seconds()), a steady clock otherwise.
class DeviceTimer {
 public:
  explicit DeviceTimer(const torch::Device& device);
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;
  void start();
  void stop();
  /// Seconds between the last start() and stop() (waits for the stop event on CUDA).
  double seconds();

 private:
  struct Impl;
  Impl* m_impl;
};

// --- autocast -----------------------------------------------------------------------------

/// Which autocast modes are on (CPU and CUDA), and at which dtypes.
struct AutocastState {
  bool cpu = false;
  bool cuda = false;
  at::ScalarType cpu_dtype = at::kBFloat16;
  at::ScalarType cuda_dtype = at::kHalf;
};
AutocastState autocastState();
void setAutocastState(const AutocastState& state);

/// Autocast on `device_type` at `dtype` for the life of the scope (nothing when !enabled);
/// the previous state comes back at the end, and the outermost scope clears the cast cache.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device_type, at::ScalarType dtype, bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool m_enabled;
  AutocastState m_previous;
};

/// Autocast off on every device for the life of the scope, the previous state back at its end:
/// what must stay fp32 in a reduced-precision step (the quantizer, the losses).
class AutocastOff {
 public:
  AutocastOff();
  ~AutocastOff();
  AutocastOff(const AutocastOff&) = delete;
  AutocastOff& operator=(const AutocastOff&) = delete;

 private:
  AutocastState m_previous;
};

/// `x` in fp32 when autocast made it bf16 or fp16; otherwise `x` itself.
torch::Tensor inFp32(const torch::Tensor& x);

// --- serialisation ------------------------------------------------------------------------

/// torch::pickle_load: a Python torch.save file of plain containers and tensors.
c10::IValue pickleLoad(const std::vector<char>& bytes);

}  // namespace tb::trainer::compat
