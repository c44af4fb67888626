#include "trainer/host_allocator.h"

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  // The trainer's allocator, as in tokenbench-trainer: every test runs on it.
  tb::trainer::HostAllocator::install();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
