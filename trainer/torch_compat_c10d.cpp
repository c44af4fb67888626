#include "trainer/torch_compat_c10d.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if TB_WITH_CUDA && defined(USE_C10D_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define TB_HAVE_NCCL 1
#else
#define TB_HAVE_NCCL 0
#endif

#include <cstdlib>
#include <stdexcept>

namespace tb::trainer::compat {

c10::intrusive_ptr<c10d::Store> makeTcpStoreClient(const std::string& host, int port,
                                                   std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = false;
  options.waitWorkers = false;
  options.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(host, options);
}

c10::intrusive_ptr<c10d::Store> makeFileStore(const std::string& path,
                                              std::chrono::milliseconds timeout) {
  auto store = c10::make_intrusive<c10d::FileStore>(path, -1);
  store->setTimeout(timeout);
  return store;
}

c10::intrusive_ptr<CollectiveBackend> makeGlooBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                      int rank, int world_size,
                                                      std::chrono::milliseconds timeout,
                                                      const GlooTransport& transport, int threads) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  if (!transport.interface.empty()) {
    options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForInterface(transport.interface));
  } else if (!transport.hostname.empty()) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(transport.hostname));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  options->threads = threads;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
}

bool ncclAvailable() { return TB_HAVE_NCCL != 0; }

c10::intrusive_ptr<CollectiveBackend> makeNcclBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                      int rank, int world_size,
                                                      std::chrono::milliseconds timeout) {
#if TB_HAVE_NCCL
  // Blocking wait: wait() returns when the collective has finished on the device, or throws
  // after `timeout`, so a dead or hung peer ends this rank with an error naming it (the
  // heartbeat diagnosis), instead of a kernel that waits forever. Set before construction: the
  // process group reads it then. A user's own setting wins.
  ::setenv("TORCH_NCCL_BLOCKING_WAIT", "1", 0);
  ::setenv("NCCL_BLOCKING_WAIT", "1", 0);
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
#else
  (void)store;
  (void)rank;
  (void)world_size;
  (void)timeout;
  throw std::runtime_error(cudaDeviceCount() > 0 || TB_WITH_CUDA
                               ? "this LibTorch was built without NCCL"
                               : "this LibTorch has no CUDA, so no NCCL");
#endif
}

}  // namespace tb::trainer::compat
