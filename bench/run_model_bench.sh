#!/usr/bin/env bash
# The model figures of docs/benchmarks.md: forward+backward of the reconstruction + quantizer losses for
# magvit2-small and magvit2-readme at batch 1, encode/decode (tokenbench-trainer bench), and the
# LFQ loss for K = 10, 14, 18 with the exact [tokens x 2^K] codebook entropy against the factorised
# one (tokenbench-bench). One process per case (peak RSS is per process).
# Usage: bench/run_model_bench.sh [build dir] (default build).
set -euo pipefail
build="${1:-build}"
threads=${TB_BENCH_THREADS:-2}
trainer() { "$build/bin/tokenbench-trainer" bench --threads "$threads" "$@"; }
for preset in magvit2-small magvit2-readme; do
  trainer --what gen-step-recon --preset "$preset" --batch 1 --warmup 1 --steps 2
  trainer --what encode --preset "$preset" --batch 1 --steps 3
  trainer --what decode --preset "$preset" --batch 1 --steps 3
done
for bits in 10 14 18; do
  for estimate in exact factorized; do
    "$build/bin/tokenbench-bench" --threads "$threads" --what lfq --bits "$bits" --tokens 1280 --estimate "$estimate" --repeats 3
  done
done
