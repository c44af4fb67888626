#pragma once
// The trainer's CPU allocator: tensors of 1 MiB and more from their own mappings (huge pages from
// 2 MiB), kept for reuse under a bound.
//
// A training step frees and allocates the same activations every step. glibc serves blocks over
// its mmap threshold from fresh mappings and unmaps them on free, so every step faulted their
// pages in again, 4 KiB at a time; in a virtual machine a fault can cost tens of microseconds
// (here 229 ms to fault in 71 MB, one activation of the README configuration, and 16 ms with
// huge pages). Blocks under the threshold come from glibc's heap, which keeps its pages but
// fragments: the README configuration's generator step left 3.3 GB of heap for 0.9 GB in use.
// So tensors of kLargeBlock and more come from mappings (2 MiB-aligned and advised for
// transparent huge pages from kHugePage), and a freed one stays mapped for the next request that
// fits it. The cache is bounded: in use + cached never exceeds the most ever in use at once plus
// kCacheSlack. README configuration's generator step at batch 1: 5.7 GB peak with this, 6.3 GB
// with glibc's heap below 32 MiB (and this above). bench-small encode: 0.21 s with this, 0.18 s
// with glibc's heap below 32 MiB, 0.27 s without the slack (its misses thrashed the cache).

#include "trainer/torch_compat_version.h"

#include <c10/core/Allocator.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>

namespace tb::trainer {

class HostAllocator final : public c10::Allocator {
 public:
  /// Blocks from this size up are this allocator's; smaller ones are c10's default (glibc).
  static constexpr std::size_t kLargeBlock = std::size_t{1} << 20;
  /// Blocks from this size up start on a transparent-huge-page boundary and are advised for them.
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  /// How far in use + cached may exceed the most ever in use at once.
  static constexpr std::size_t kCacheSlack = std::size_t{256} << 20;

  struct Stats {
    std::size_t live_bytes = 0;       ///< blocks in use (rounded sizes)
    std::size_t cached_bytes = 0;     ///< blocks freed and kept mapped
    std::size_t peak_live_bytes = 0;  ///< most in use at once
    std::int64_t mapped = 0;          ///< new mappings made
    std::int64_t reused = 0;          ///< requests served from the cache
    std::int64_t unmapped = 0;        ///< cached blocks given back to keep the bound
  };

  /// The process-wide instance (never destroyed: tensors may outlive static destructors).
  static HostAllocator& instance();
  /// Makes instance() LibTorch's CPU allocator. Tensors allocated before keep their deleters.
  static void install();
  /// The size a request of `bytes` (>= kLargeBlock) occupies: a multiple of kHugePage from
  /// 32 MiB (at most 6 % more), of 64 KiB below.
  static std::size_t roundedSize(std::size_t bytes);

  c10::DataPtr allocate(std::size_t bytes) TB_ALLOCATE_CONST override;
  c10::DeleterFnPtr raw_deleter() const override;
#if TB_TORCH_AT_LEAST(2, 3)
  /// A plain memcpy: these blocks are ordinary host memory.
  void copy_data(void* dest, const void* src, std::size_t count) const override;
#endif

  Stats stats() const;
  /// Unmaps every cached block.
  void releaseCache();

 private:
  HostAllocator() = default;
  void* allocateLarge(std::size_t bytes) const;
  bool freeLarge(void* ptr) const;  ///< false when ptr is not a block of this allocator
  void evictOldest() const;         // with m_mutex held
  static void deleteLarge(void* ptr);
  static void deleteAny(void* ptr);

  struct Cached {
    void* ptr;
    std::size_t bytes;
  };
  // allocate() is const in c10::Allocator before LibTorch 2.3: the bookkeeping is mutable.
  mutable std::mutex m_mutex;
  mutable std::unordered_map<void*, std::size_t> m_live;  ///< block in use -> its rounded size
  mutable std::list<Cached> m_free;                       ///< cached blocks, oldest first
  mutable std::multimap<std::size_t, std::list<Cached>::iterator> m_free_by_size;
  mutable Stats m_stats;
};

}  // namespace tb::trainer
