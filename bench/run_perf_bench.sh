#!/usr/bin/env bash
# The performance table of the README (issue 9): every row of the reference measurements, each in
# its own `tokenbench-trainer bench` process (peak RSS is per process), at the issue's shapes:
# bench-small at input [2, 3, 17, 64, 64] and the README configuration (magvit2-readme) at batch
# 1, 2 intra-op threads. Prints a Markdown table and, per row, the command that measured it.
# The perceptual loss runs with random LPIPS-VGG16 weights (--random-perceptual): the same cost.
# Usage: bench/run_perf_bench.sh [build dir] (default build). TB_BENCH_THREADS overrides 2.
set -euo pipefail
build="${1:-build}"
trainer="$build/bin/tokenbench-trainer"
threads=${TB_BENCH_THREADS:-2}
command -v jq >/dev/null || { echo "run_perf_bench.sh needs jq" >&2; exit 2; }

# The README configuration with train.activation_checkpointing ["all"].
readme_ac=$(mktemp --suffix=.json)
trap 'rm -f "$readme_ac"' EXIT
"$trainer" print-config --preset magvit2-readme | jq '.train.activation_checkpointing = ["all"]' >"$readme_ac"

# label | reference seconds | reference peak RSS (GB, or -) | bench arguments
rows=(
  "generator step, reconstruction + LFQ losses|5.0|-|--preset bench-small --what gen-step-recon --steps 3"
  "generator step, every default loss|13.5|-|--preset bench-small --what gen-step --random-perceptual --steps 3"
  "discriminator step with R1 penalty|18.9|-|--preset bench-small --what discr-step --steps 3"
  "discriminator step without R1|8.6|-|--preset bench-small --what discr-step --no-r1 --steps 3"
  "encode (no gradient)|0.60|-|--preset bench-small --what encode --steps 5"
  "decode from indices|0.57|-|--preset bench-small --what decode --steps 5"
  "full trainer step (both steps, EMA, optimisers)|22.8|6.9|--preset bench-small --what train-step --random-perceptual --steps 3"
  "README config, batch 1: full generator step|95|10.2|--preset magvit2-readme --batch 1 --what gen-step --random-perceptual --warmup 0 --steps 1"
  "README config, batch 1: full generator step, activation checkpointing \"all\"|95|10.2|--config $readme_ac --batch 1 --what gen-step --random-perceptual --warmup 0 --steps 1"
  "README config, batch 1: encode|10.9|-|--preset magvit2-readme --batch 1 --what encode --steps 3"
  "README config, batch 1: decode|11.1|-|--preset magvit2-readme --batch 1 --what decode --steps 3"
)

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
table="| row | reference | Tokenbench median (min-max) | ratio | peak RSS (reference) | GFLOP/s (% of peak) |
|---|---|---|---|---|---|"
commands=""
for row in "${rows[@]}"; do
  IFS='|' read -r label ref ref_rss args <<<"$row"
  # shellcheck disable=SC2086
  json=$("$trainer" bench --threads "$threads" $args)
  echo "$json" >&2
  median=$(jq -r '.median_s' <<<"$json")
  cells=$(jq -r --arg ref "$ref" --arg rss "$ref_rss" '
    def r(n): (n * 100 | round) / 100;
    "\(r(.median_s)) s (\(r(.min_s))-\(r(.max_s))) | \(r(.median_s / ($ref | tonumber)))x | " +
    "\((.peak_rss_mb / 1024 * 100 | round) / 100) GB" + (if $rss == "-" then "" else " (\($rss) GB)" end) +
    " | \(.gflops | round) (\(.peak_fraction * 100 | round)%)"' <<<"$json")
  table+=$'\n'"| $label | $ref s | $cells |"
  commands+="    tokenbench-trainer bench --threads $threads ${args//$readme_ac/readme-ac.json}"$'\n'
  : "$median"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "$table"
echo
echo "Machine: $(nproc) cores, $(jq -r '.blas' <<<"$json"), peak $(jq -r '[.gemm_peak_gflops, .conv_peak_gflops] | max | round' <<<"$json") GFLOP/s at $threads threads (BLAS GEMM $(jq -r '.gemm_peak_gflops | round' <<<"$json"), oneDNN convolution $(jq -r '.conv_peak_gflops | round' <<<"$json")); load average $load_before before, $load_after after."
echo
echo "Commands (one process each; readme-ac.json: \`print-config --preset magvit2-readme\` with train.activation_checkpointing [\"all\"]):"
echo
echo "$commands"
