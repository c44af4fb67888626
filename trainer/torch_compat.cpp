#include "trainer/torch_compat.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <torch/serialize.h>

#if TB_WITH_CUDA
// The CUDA runtime and c10's own CUDA headers only: ATen's CUDA headers pull in cuBLAS, cuSPARSE
// and cuSOLVER headers, which a GPU machine's PyTorch wheel may not ship.
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

#include <dlfcn.h>

#include <chrono>
#include <mutex>
#include <stdexcept>

namespace tb::trainer::compat {

std::string torchVersion() { return TORCH_VERSION; }

// --- CUDA devices -------------------------------------------------------------------------

bool cudaAvailable() {
#if TB_WITH_CUDA
  return torch::cuda::is_available();
#else
  return false;
#endif
}

int cudaDeviceCount() {
#if TB_WITH_CUDA
  return static_cast<int>(torch::cuda::device_count());
#else
  return 0;
#endif
}

CudaDeviceInfo cudaDeviceInfo(int index) {
#if TB_WITH_CUDA
  if (index < 0 || index >= cudaDeviceCount()) {
    throw std::runtime_error("no CUDA device " + std::to_string(index) + " (" +
                             std::to_string(cudaDeviceCount()) + " visible)");
  }
  cudaDeviceProp props{};
  cudaError_t status = cudaGetDeviceProperties(&props, index);
  CudaDeviceInfo info;
  info.name = status == cudaSuccess ? props.name : "?";
  info.total_bytes = static_cast<std::int64_t>(props.totalGlobalMem);
  info.compute_major = props.major;
  info.compute_minor = props.minor;
  std::size_t free = 0, total = 0;
  if (status == cudaSuccess) {
    const c10::DeviceIndex previous = c10::cuda::current_device();
    c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
    status = cudaMemGetInfo(&free, &total);
    c10::cuda::set_device(previous);
  }
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::runtime_error("CUDA device " + std::to_string(index) + " (" + info.name +
                             "): " + cudaGetErrorString(status));
  }
  info.free_bytes = static_cast<std::int64_t>(free);
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index) == cudaSuccess) info.bus_id = bus_id;
  return info;
#else
  throw std::runtime_error("this LibTorch has no CUDA (device " + std::to_string(index) + ")");
#endif
}

void setCurrentDevice(const torch::Device& device) {
#if TB_WITH_CUDA
  if (device.is_cuda()) c10::cuda::set_device(device.index() < 0 ? 0 : device.index());
#else
  (void)device;
#endif
}

void synchronize(const torch::Device& device) {
#if TB_WITH_CUDA
  if (device.is_cuda()) torch::cuda::synchronize(device.index() < 0 ? 0 : device.index());
#else
  (void)device;
#endif
}

void setCudnnBenchmark(bool on) { at::globalContext().setBenchmarkCuDNN(on); }

std::string cudnnVersion() {
  // Asked of the loaded library itself: LibTorch's own query is the version of the headers it
  // was compiled with, and a wheel runs whichever libcudnn the system resolves.
  using GetVersion = std::size_t (*)();
  const auto get = reinterpret_cast<GetVersion>(::dlsym(RTLD_DEFAULT, "cudnnGetVersion"));
  if (get == nullptr) return {};
  const std::size_t v = get();
  // cuDNN 9 numbers its versions major x 10000 + minor x 100 + patch; cuDNN 8 x 1000.
  const std::size_t major_unit = v >= 90000 ? 10000 : 1000;
  return std::to_string(v / major_unit) + "." + std::to_string(v % major_unit / 100) + "." +
         std::to_string(v % 100);
}

std::string cudaRuntimeVersion() {
#if TB_WITH_CUDA
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return {};
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
#else
  return {};
#endif
}

std::int64_t peakAllocatedBytes(const torch::Device& device) {
#if TB_WITH_CUDA
  if (device.is_cuda()) {
    // Index 0 of every statistic array is the aggregate over pool kinds.
    const auto stats =
        c10::cuda::CUDACachingAllocator::getDeviceStats(device.index() < 0 ? 0 : device.index());
    return static_cast<std::int64_t>(stats.allocated_bytes[0].peak);
  }
#else
  (void)device;
#endif
  return 0;
}

void resetPeakAllocated(const torch::Device& device) {
#if TB_WITH_CUDA
  if (device.is_cuda())
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index() < 0 ? 0 : device.index());
#else
  (void)device;
#endif
}

torch::Tensor pinned(const torch::Tensor& tensor) {
#if TB_WITH_CUDA
  if (cudaAvailable() && tensor.device().is_cpu()) return tensor.pin_memory();
#endif
  return tensor;
}

torch::Tensor cudaRngState(int index) {
  if (index < 0 || index >= cudaDeviceCount()) return {};
  at::Generator generator = at::globalContext().defaultGenerator(
      c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)));
  std::lock_guard<std::mutex> guard(generator.mutex());
  return generator.get_state();
}

void setCudaRngState(int index, const torch::Tensor& state) {
  if (index < 0 || index >= cudaDeviceCount() || !state.defined()) return;
  at::Generator generator = at::globalContext().defaultGenerator(
      c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)));
  std::lock_guard<std::mutex> guard(generator.mutex());
  generator.set_state(state);
}

struct DeviceTimer::Impl {
  torch::Device device;
  std::chrono::steady_clock::time_point start, stop;
#if TB_WITH_CUDA
  cudaEvent_t start_event = nullptr, stop_event = nullptr;
  void record(cudaEvent_t event) const {
    const c10::cuda::CUDAStream stream =
        c10::cuda::getCurrentCUDAStream(device.index() < 0 ? 0 : device.index());
    C10_CUDA_CHECK(cudaEventRecord(event, stream.stream()));
  }
#endif
};

DeviceTimer::DeviceTimer(const torch::Device& device) : m_impl(new Impl{device, {}, {}}) {
#if TB_WITH_CUDA
  if (device.is_cuda()) {
    C10_CUDA_CHECK(cudaEventCreate(&m_impl->start_event));
    C10_CUDA_CHECK(cudaEventCreate(&m_impl->stop_event));
  }
#endif
}

DeviceTimer::~DeviceTimer() {
#if TB_WITH_CUDA
  if (m_impl->start_event != nullptr) (void)cudaEventDestroy(m_impl->start_event);
  if (m_impl->stop_event != nullptr) (void)cudaEventDestroy(m_impl->stop_event);
#endif
  delete m_impl;
}

void DeviceTimer::start() {
#if TB_WITH_CUDA
  if (m_impl->device.is_cuda()) return m_impl->record(m_impl->start_event);
#endif
  m_impl->start = std::chrono::steady_clock::now();
}

void DeviceTimer::stop() {
#if TB_WITH_CUDA
  if (m_impl->device.is_cuda()) return m_impl->record(m_impl->stop_event);
#endif
  m_impl->stop = std::chrono::steady_clock::now();
}

double DeviceTimer::seconds() {
#if TB_WITH_CUDA
  if (m_impl->device.is_cuda()) {
    C10_CUDA_CHECK(cudaEventSynchronize(m_impl->stop_event));
    float ms = 0;
    C10_CUDA_CHECK(cudaEventElapsedTime(&ms, m_impl->start_event, m_impl->stop_event));
    return static_cast<double>(ms) / 1000.0;
  }
#endif
  return std::chrono::duration<double>(m_impl->stop - m_impl->start).count();
}

// --- autocast -----------------------------------------------------------------------------

// LibTorch 2.4 replaced the per-device functions (is_cpu_enabled, set_autocast_gpu_dtype, ...)
// with ones taking a device type, and deprecated the old ones.
AutocastState autocastState() {
  AutocastState s;
#if TB_TORCH_AT_LEAST(2, 4)
  s.cpu = at::autocast::is_autocast_enabled(at::kCPU);
  s.cuda = at::autocast::is_autocast_enabled(at::kCUDA);
  s.cpu_dtype = at::autocast::get_autocast_dtype(at::kCPU);
  s.cuda_dtype = at::autocast::get_autocast_dtype(at::kCUDA);
#else
  s.cpu = at::autocast::is_cpu_enabled();
  s.cuda = at::autocast::is_enabled();
  s.cpu_dtype = at::autocast::get_autocast_cpu_dtype();
  s.cuda_dtype = at::autocast::get_autocast_gpu_dtype();
#endif
  return s;
}

void setAutocastState(const AutocastState& s) {
#if TB_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(at::kCPU, s.cpu_dtype);
  at::autocast::set_autocast_dtype(at::kCUDA, s.cuda_dtype);
  at::autocast::set_autocast_enabled(at::kCPU, s.cpu);
  at::autocast::set_autocast_enabled(at::kCUDA, s.cuda);
#else
  at::autocast::set_autocast_cpu_dtype(s.cpu_dtype);
  at::autocast::set_autocast_gpu_dtype(s.cuda_dtype);
  at::autocast::set_cpu_enabled(s.cpu);
  at::autocast::set_enabled(s.cuda);
#endif
}

AutocastScope::AutocastScope(c10::DeviceType device_type, at::ScalarType dtype, bool enabled)
    : m_enabled(enabled), m_previous(autocastState()) {
  if (!m_enabled) return;
  AutocastState s = m_previous;
  if (device_type == c10::DeviceType::CUDA) {
    s.cuda = true;
    s.cuda_dtype = dtype;
  } else {
    s.cpu = true;
    s.cpu_dtype = dtype;
  }
  setAutocastState(s);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!m_enabled) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  setAutocastState(m_previous);
}

AutocastOff::AutocastOff() : m_previous(autocastState()) {
  AutocastState off = m_previous;
  off.cpu = off.cuda = false;
  setAutocastState(off);
}

AutocastOff::~AutocastOff() { setAutocastState(m_previous); }

torch::Tensor inFp32(const torch::Tensor& x) {
  const auto type = x.scalar_type();
  return type == torch::kBFloat16 || type == torch::kHalf ? x.to(torch::kFloat) : x;
}

// --- serialisation ------------------------------------------------------------------------

c10::IValue pickleLoad(const std::vector<char>& bytes) { return torch::pickle_load(bytes); }

}  // namespace tb::trainer::compat
