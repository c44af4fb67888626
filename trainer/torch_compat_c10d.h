#pragma once
// The c10d half of the LibTorch compatibility seam (see torch_compat.h): LibTorch 2.0 turned the
// process-group classes (ProcessGroupGloo, ProcessGroupNCCL) into c10d::Backend subclasses, and
// NCCL exists only in CUDA builds.

#include "trainer/torch_compat.h"

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#if TB_TORCH_AT_LEAST(2, 0)
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

#include <chrono>
#include <string>

namespace tb::trainer::compat {

/// What runs collectives: c10d::Backend in 2.x, c10d::ProcessGroup in 1.13. Both have
/// allreduce, broadcast, send and recv with the same signatures.
#if TB_TORCH_AT_LEAST(2, 0)
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

/// A client of the c10d TCPStore at host:port (torchrun's agent store); `timeout` bounds
/// connecting and every blocking get.
c10::intrusive_ptr<c10d::Store> makeTcpStoreClient(const std::string& host, int port,
                                                   std::chrono::milliseconds timeout);
/// A c10d FileStore in `path` (no fixed number of workers: whoever made the file removes it).
c10::intrusive_ptr<c10d::Store> makeFileStore(const std::string& path,
                                              std::chrono::milliseconds timeout);

/// Where Gloo's TCP transport binds: a network interface (GLOO_SOCKET_IFNAME), else the address
/// a host name resolves to, else Gloo's default (the address of the machine's host name).
struct GlooTransport {
  std::string interface;
  std::string hostname;
};
c10::intrusive_ptr<CollectiveBackend> makeGlooBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                      int rank, int world_size,
                                                      std::chrono::milliseconds timeout,
                                                      const GlooTransport& transport, int threads);

/// Whether this LibTorch was built with NCCL (a CUDA build with USE_C10D_NCCL).
bool ncclAvailable();
/// A ProcessGroupNCCL on the current CUDA device (compat::setCurrentDevice first). Collectives
/// block the calling thread until done or `timeout` (blocking wait), so a dead peer becomes an
/// exception, as with Gloo. Throws std::runtime_error when ncclAvailable() is false.
c10::intrusive_ptr<CollectiveBackend> makeNcclBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                      int rank, int world_size,
                                                      std::chrono::milliseconds timeout);

}  // namespace tb::trainer::compat
