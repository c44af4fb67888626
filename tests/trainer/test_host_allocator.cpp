#include "trainer/host_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <random>
#include <vector>

namespace tb::trainer {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// test_main installs the allocator: tensors get it through LibTorch.
TEST(HostAllocator, IsLibTorchsCpuAllocator) {
  EXPECT_EQ(c10::GetCPUAllocator(), &HostAllocator::instance());
}

// A freed large tensor's block serves the next tensor of its size: same address, no new mapping.
TEST(HostAllocator, ReusesAFreedBlockOfTheSameSize) {
  HostAllocator& allocator = HostAllocator::instance();
  allocator.releaseCache();
  void* first = nullptr;
  {
    torch::Tensor a = torch::ones({3 * 1024 * 1024 / 4});  // 3 MiB
    first = a.data_ptr();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % HostAllocator::kHugePage, 0u)
        << "blocks from 2 MiB start on a huge-page boundary";
  }
  const auto before = allocator.stats();
  EXPECT_GE(before.cached_bytes, 3 * kMiB);
  torch::Tensor b = torch::zeros({3 * 1024 * 1024 / 4});
  const auto after = allocator.stats();
  EXPECT_EQ(b.data_ptr(), first);
  EXPECT_EQ(after.reused, before.reused + 1);
  EXPECT_EQ(after.mapped, before.mapped);
  EXPECT_EQ(b.sum().item<float>(), 0.0f) << "a reused block holds what the new tensor wrote";
}

// Small tensors stay with c10's default allocator (glibc): the block table never sees them.
TEST(HostAllocator, LeavesSmallTensorsToTheDefaultAllocator) {
  HostAllocator& allocator = HostAllocator::instance();
  const auto before = allocator.stats();
  torch::Tensor small = torch::ones({1000});
  EXPECT_EQ(allocator.stats().live_bytes, before.live_bytes);
  EXPECT_EQ(allocator.stats().mapped, before.mapped);
  // raw_allocate / raw_deallocate (LibTorch's untyped path) on both kinds of block.
  for (std::size_t bytes : {std::size_t{4096}, 5 * kMiB}) {
    void* p = allocator.raw_allocate(bytes);
    static_cast<char*>(p)[bytes - 1] = 1;
    allocator.raw_deallocate(p);
  }
  EXPECT_EQ(allocator.stats().live_bytes, before.live_bytes);
}

TEST(HostAllocator, RoundsToHugePagesFrom32MiBAnd64KiBBelow) {
  EXPECT_EQ(HostAllocator::roundedSize(kMiB + 1), kMiB + 64 * 1024);
  EXPECT_EQ(HostAllocator::roundedSize(33 * kMiB), 34 * kMiB);
  EXPECT_EQ(HostAllocator::roundedSize(71 * 1000 * 1000), 68 * kMiB);
}

// A cached block serves a request up to a quarter smaller than itself, not a much smaller one.
TEST(HostAllocator, ReusesABlockAtMostAQuarterLarger) {
  HostAllocator& allocator = HostAllocator::instance();
  allocator.releaseCache();
  void* block = nullptr;
  {
    torch::Tensor a = torch::empty({40 * 1024 * 1024 / 4});  // 40 MiB
    block = a.data_ptr();
  }
  torch::Tensor far_smaller = torch::empty({20 * 1024 * 1024 / 4});
  EXPECT_NE(far_smaller.data_ptr(), block);
  torch::Tensor smaller = torch::empty({34 * 1024 * 1024 / 4});
  EXPECT_EQ(smaller.data_ptr(), block);
}

// Resident blocks (in use + cached) never exceed the most ever in use at once plus the slack,
// whatever the order of requests: a miss gives cached blocks back first. (The blocks are never
// touched, so they cost address space, not memory.)
TEST(HostAllocator, CacheNeverHoldsMoreThanTheSlackAboveThePeakInUse) {
  HostAllocator& allocator = HostAllocator::instance();
  allocator.releaseCache();
  std::mt19937 rng(7);
  std::vector<torch::Tensor> alive;
  const std::int64_t unmapped_before = allocator.stats().unmapped;
  for (int i = 0; i < 400; ++i) {
    if (!alive.empty() && rng() % 3 == 0) {
      alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(rng() % alive.size()));
    } else {
      const auto mib = static_cast<std::int64_t>(1 + rng() % 200);
      alive.push_back(torch::empty({mib * 1024 * 1024 / 4}));
    }
    const auto s = allocator.stats();
    ASSERT_LE(s.live_bytes + s.cached_bytes, s.peak_live_bytes + HostAllocator::kCacheSlack)
        << "after request " << i;
  }
  EXPECT_GT(allocator.stats().unmapped, unmapped_before) << "the bound had to give blocks back";
  EXPECT_GT(allocator.stats().reused, 0);
}

}  // namespace
}  // namespace tb::trainer
