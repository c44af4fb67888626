// Tensors of 1 MiB and more from mappings, cached under a bound.
#include "trainer/host_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tb::trainer {
namespace {

std::size_t roundUp(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

// A mapping of `bytes`; from kHugePage on, starting on a kHugePage boundary (the unaligned head
// and tail of a larger mapping are given back) and advised for transparent huge pages. nullptr
// when the system has no memory for it.
void* mapBlock(std::size_t bytes) {
  const int prot = PROT_READ | PROT_WRITE;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  const std::size_t huge = HostAllocator::kHugePage;
  if (bytes < huge) {
    void* ptr = ::mmap(nullptr, bytes, prot, flags, -1, 0);
    return ptr == MAP_FAILED ? nullptr : ptr;
  }
  void* raw = ::mmap(nullptr, bytes + huge, prot, flags, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = roundUp(start, huge);
  if (aligned > start) ::munmap(raw, aligned - start);
  if (start + huge > aligned)
    ::munmap(reinterpret_cast<void*>(aligned + bytes), start + huge - aligned);
  void* ptr = reinterpret_cast<void*>(aligned);
  ::madvise(ptr, bytes, MADV_HUGEPAGE);  // advice: without huge pages the block works the same
  return ptr;
}

}  // namespace

HostAllocator& HostAllocator::instance() {
  static auto* allocator = new HostAllocator();
  return *allocator;
}

void HostAllocator::install() { c10::SetCPUAllocator(&instance(), /*priority=*/1); }

std::size_t HostAllocator::roundedSize(std::size_t bytes) {
  return roundUp(bytes, bytes >= (std::size_t{32} << 20) ? kHugePage : std::size_t{64} << 10);
}

c10::DataPtr HostAllocator::allocate(std::size_t bytes) TB_ALLOCATE_CONST {
  if (bytes < kLargeBlock) return c10::GetDefaultCPUAllocator()->allocate(bytes);
  void* ptr = allocateLarge(bytes);
  return {ptr, ptr, &deleteLarge, c10::Device(c10::DeviceType::CPU)};
}

c10::DeleterFnPtr HostAllocator::raw_deleter() const { return &deleteAny; }

#if TB_TORCH_AT_LEAST(2, 3)
void HostAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  default_copy_data(dest, src, count);
}
#endif

void* HostAllocator::allocateLarge(std::size_t bytes) const {
  const std::size_t rounded = roundedSize(bytes);
  std::lock_guard<std::mutex> lock(m_mutex);
  void* ptr = nullptr;
  std::size_t size = rounded;
  // The smallest cached block that fits, if it is at most a quarter larger: activations of
  // nearby sizes (a layer's input and its padded copy) share blocks instead of each missing.
  if (auto hit = m_free_by_size.lower_bound(rounded);
      hit != m_free_by_size.end() && hit->first <= rounded + rounded / 4) {
    size = hit->first;
    ptr = hit->second->ptr;
    m_free.erase(hit->second);
    m_free_by_size.erase(hit);
    m_stats.cached_bytes -= size;
    ++m_stats.reused;
  } else {
    // A new mapping: first give back the oldest cached blocks until in use + cached + this
    // block fits under the bound (all of them when in use + this block alone exceeds it).
    const std::size_t limit =
        std::max(m_stats.peak_live_bytes + kCacheSlack, m_stats.live_bytes + rounded);
    while (!m_free.empty() && m_stats.live_bytes + m_stats.cached_bytes + rounded > limit)
      evictOldest();
    ptr = mapBlock(rounded);
    if (ptr == nullptr && !m_free.empty()) {  // out of memory: the cache goes first
      while (!m_free.empty()) evictOldest();
      ptr = mapBlock(rounded);
    }
    TORCH_CHECK(ptr != nullptr, "out of memory: could not map ", rounded >> 20, " MiB (",
                std::strerror(errno), ")");
    ++m_stats.mapped;
  }
  m_live.emplace(ptr, size);
  m_stats.live_bytes += size;
  m_stats.peak_live_bytes = std::max(m_stats.peak_live_bytes, m_stats.live_bytes);
  return ptr;
}

bool HostAllocator::freeLarge(void* ptr) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  const auto it = m_live.find(ptr);
  if (it == m_live.end()) return false;
  const std::size_t bytes = it->second;
  m_live.erase(it);
  m_stats.live_bytes -= bytes;
  m_free.push_back({ptr, bytes});
  m_free_by_size.emplace(bytes, std::prev(m_free.end()));
  m_stats.cached_bytes += bytes;
  return true;
}

void HostAllocator::evictOldest() const {
  const Cached oldest = m_free.front();
  const auto range = m_free_by_size.equal_range(oldest.bytes);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second == m_free.begin()) {
      m_free_by_size.erase(it);
      break;
    }
  }
  m_free.pop_front();
  ::munmap(oldest.ptr, oldest.bytes);
  m_stats.cached_bytes -= oldest.bytes;
  ++m_stats.unmapped;
}

void HostAllocator::deleteLarge(void* ptr) {
  const bool owned = instance().freeLarge(ptr);
  TORCH_INTERNAL_ASSERT(owned, "HostAllocator: freeing a block it does not own");
}

// raw_deallocate() does not say which allocation it frees: the block table does.
void HostAllocator::deleteAny(void* ptr) {
  if (!instance().freeLarge(ptr)) c10::GetDefaultCPUAllocator()->raw_deleter()(ptr);
}

HostAllocator::Stats HostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_stats;
}

void HostAllocator::releaseCache() {
  std::lock_guard<std::mutex> lock(m_mutex);
  while (!m_free.empty()) evictOldest();
}

}  // namespace tb::trainer
