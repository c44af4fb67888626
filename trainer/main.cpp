#include "trainer/cli/trainer_cli.h"

#include <malloc.h>

#include <climits>

int main(int argc, char** argv) {
  // A training step frees and allocates the same large tensors every step. glibc serves blocks
  // over its mmap threshold (128 KiB at first) from fresh mappings and unmaps them on free, so each
  // step faulted in and zeroed its activations again (encode at bench-small: 0.71 s, 0.17 s
  // without). Blocks up to 32 MiB (glibc's largest threshold) now come from the heap, which is
  // never trimmed, so their pages are reused. Larger ones stay mappings: serving those from the
  // heap too fragmented it (README configuration's generator step: 9.1 GB peak instead of 7.4).
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  return tb::trainer::runTrainerCli(argc, argv);
}
