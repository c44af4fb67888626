#include "trainer/cli/trainer_cli.h"
#include "trainer/host_allocator.h"

#include <malloc.h>

#include <climits>

int main(int argc, char** argv) {
  // A training step frees and allocates the same tensors every step; their pages must stay
  // mapped, or every step faults them in again (encode at bench-small: 0.71 s, 0.17 s without).
  // Tensors of 1 MiB and more: HostAllocator's cached mappings. Everything smaller, and what
  // the libraries allocate themselves: glibc's heap up to 32 MiB (its largest mmap threshold),
  // never trimmed.
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  tb::trainer::HostAllocator::install();
  return tb::trainer::runTrainerCli(argc, argv);
}
