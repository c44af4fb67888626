#!/usr/bin/env bash
# The performance table of docs/benchmarks.md (issue 9): every row of the reference measurements, each in
# its own `tokenbench-trainer bench` process (peak RSS is per process), at the issue's shapes:
# bench-small at input [2, 3, 17, 64, 64] and the README configuration (magvit2-readme) at batch
# 1, 2 intra-op threads. Prints a Markdown table and, per row, the command that measured it.
# The perceptual loss runs with random LPIPS-VGG16 weights (--random-perceptual): the same cost.
#
# Usage: bench/run_perf_bench.sh [BUILD] [OTHER_BUILD] (default build). With two builds (e.g.
# build/ on Debian's LibTorch 1.13 and build-torch2/ on a 2.x wheel) every row runs in both,
# alternating which goes first, for TB_BENCH_ROUNDS rounds (default 3), and the table has a
# column per build and their ratio per row (the median of the rounds' ratios).
# TB_BENCH_THREADS overrides 2. TB_BENCH_RESULTS=DIR keeps every process's JSON there (one file
# per row and build); given a DIR that holds them already, the table is printed again from them
# without measuring.
set -euo pipefail
builds=("${1:-build}")
[ -n "${2:-}" ] && builds+=("$2")
threads=${TB_BENCH_THREADS:-2}
rounds=${TB_BENCH_ROUNDS:-$([ ${#builds[@]} -eq 2 ] && echo 3 || echo 1)}
command -v jq >/dev/null || { echo "run_perf_bench.sh needs jq" >&2; exit 2; }
trainer() { echo "${builds[$1]}/bin/tokenbench-trainer"; }
libtorch() { "$(trainer "$1")" --version | sed -n 's/^LibTorch \([^,]*\),.*/\1/p'; }

# The README configuration with train.activation_checkpointing ["all"].
readme_ac=$(mktemp --suffix=.json)
results=${TB_BENCH_RESULTS:-$(mktemp -d)}
mkdir -p "$results"
trap 'rm -f "$readme_ac"; [ -n "${TB_BENCH_RESULTS:-}" ] || rm -rf "$results"' EXIT
"$(trainer 0)" print-config --preset magvit2-readme | jq '.train.activation_checkpointing = ["all"]' >"$readme_ac"

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
commands=""
measured=$([ -s "$results/row0.build0" ] && echo 1 || echo 0)
for i in "${!rows[@]}"; do
  IFS='|' read -r label ref ref_rss args <<<"${rows[$i]}"
  commands+="    tokenbench-trainer bench --threads $threads ${args//$readme_ac/readme-ac.json}"$'\n'
  [ "$measured" -eq 1 ] && continue
  for ((r = 0; r < rounds; r++)); do
    # Round r runs build (r + k) mod n k-th: the builds take turns at going first.
    for ((k = 0; k < ${#builds[@]}; k++)); do
      b=$(((r + k) % ${#builds[@]}))
      # shellcheck disable=SC2086
      json=$("$(trainer "$b")" bench --threads "$threads" $args)
      echo "${builds[$b]} round $((r + 1)): $json" >&2
      echo "$json" >>"$results/row$i.build$b"
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# summary FILE: one build's rounds of one row: the median, least and most of the rounds' medians,
# the largest peak RSS (GB), the median GFLOP/s and the share of peak.
summary() {
  jq -s '(map(.median_s) | sort) as $m | ($m | length) as $n |
    {median: (if $n % 2 == 1 then $m[($n - 1) / 2] else ($m[$n / 2 - 1] + $m[$n / 2]) / 2 end),
     min: $m[0], max: $m[-1], rss: (map(.peak_rss_mb) | max / 1024),
     gflops: (map(.gflops) | sort | .[length / 2 | floor]), peak: (.[0].peak_fraction)}' "$1"
}
if [ ${#builds[@]} -eq 1 ]; then
  echo "| row | reference | Tokenbench median (min-max) | ratio | peak RSS (reference) | GFLOP/s (% of peak) |"
  echo "|---|---|---|---|---|---|"
else
  echo "| row | reference | LibTorch $(libtorch 0): median (min-max) | LibTorch $(libtorch 1) | $(libtorch 1) / $(libtorch 0) | to the reference | peak RSS $(libtorch 0) / $(libtorch 1) (reference) |"
  echo "|---|---|---|---|---|---|---|"
fi
for i in "${!rows[@]}"; do
  IFS='|' read -r label ref ref_rss _ <<<"${rows[$i]}"
  a=$(summary "$results/row$i.build0")
  rss_ref=$([ "$ref_rss" = "-" ] && echo "" || echo " ($ref_rss GB)")
  if [ ${#builds[@]} -eq 1 ]; then
    jq -r --arg name "$label" --arg ref "$ref" --arg rss "$rss_ref" 'def r(n): (n * 100 | round) / 100;
      "| \($name) | \($ref) s | \(r(.median)) s (\(r(.min))-\(r(.max))) | \(r(.median / ($ref | tonumber)))x | \(r(.rss)) GB\($rss) | \(.gflops | round) (\(.peak * 100 | round)%) |"' <<<"$a"
  else
    b=$(summary "$results/row$i.build1")
    # The ratio pair by pair: round r of build 1 against round r of build 0.
    ratio=$(jq -s '[.[0], .[1]] | transpose | map(.[1].median_s / .[0].median_s) | sort |
      (if length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end)' \
      <(jq -s . "$results/row$i.build0") <(jq -s . "$results/row$i.build1"))
    jq -rn --arg name "$label" --arg ref "$ref" --arg rss "$rss_ref" --argjson a "$a" --argjson b "$b" \
      --argjson ratio "$ratio" 'def r(n): (n * 100 | round) / 100;
      "| \($name) | \($ref) s | \(r($a.median)) s (\(r($a.min))-\(r($a.max))) | \(r($b.median)) s (\(r($b.min))-\(r($b.max))) | \(r($ratio))x | \(r($a.median / ($ref | tonumber)))x / \(r($b.median / ($ref | tonumber)))x | \(r($a.rss)) / \(r($b.rss)) GB\($rss) |"'
  fi
done
echo
for b in "${!builds[@]}"; do
  last=$(tail -1 "$results/row0.build$b")
  echo "${builds[$b]}: LibTorch $(libtorch "$b"), $(jq -r '.blas' <<<"$last"), peak $(jq -r '[.gemm_peak_gflops, .conv_peak_gflops] | max | round' <<<"$last") GFLOP/s at $threads threads (BLAS GEMM $(jq -r '.gemm_peak_gflops | round' <<<"$last"), oneDNN convolution $(jq -r '.conv_peak_gflops | round' <<<"$last"))."
done
flags=$(grep -o -w -E 'avx2|avx512f|avx512_bf16|amx_bf16' /proc/cpuinfo | sort -u | paste -sd' ')
if [ "$measured" -eq 1 ]; then
  when="reprinted from $results"
else
  when="load average $load_before before, $load_after after"
fi
echo "Machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1) ($flags); $rounds round(s), $when."
echo
echo "Commands (one process each; readme-ac.json: \`print-config --preset magvit2-readme\` with train.activation_checkpointing [\"all\"]):"
echo
echo "$commands"
