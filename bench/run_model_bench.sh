#!/usr/bin/env bash
# The model figures of the README: forward+backward of the reconstruction + quantizer losses for
# magvit2-small and magvit2-readme at batch 1, encode/decode, and the LFQ loss for K = 10, 14, 18
# with the exact [tokens x 2^K] codebook entropy against the factorised one. One process per case
# (peak RSS is per process). Usage: bench/run_model_bench.sh [build dir] (default build).
set -euo pipefail
bench="${1:-build}/bin/tokenbench-bench"
threads=${TB_BENCH_THREADS:-2}
run() { "$bench" --threads "$threads" "$@"; }
for preset in magvit2-small magvit2-readme; do
  run --what gen-step-recon --preset "$preset" --batch 1 --warmup 1 --repeats 2
  run --what encode --preset "$preset" --batch 1 --repeats 3
  run --what decode --preset "$preset" --batch 1 --repeats 3
done
for bits in 10 14 18; do
  for estimate in exact factorized; do
    run --what lfq --bits "$bits" --tokens 1280 --estimate "$estimate" --repeats 3
  done
done
