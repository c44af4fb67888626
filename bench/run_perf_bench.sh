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
#
# bench/run_perf_bench.sh --peer [BUILD]: Tokenbench against magvit2-pytorch 0.5.1 itself, run
# here (set up by bench/peer/setup.sh; bench/peer/reference_bench.py times the same rows with the
# same arguments): every row runs our bench in fp32, in bf16 (only where the CPU has avx512_bf16
# or amx_bf16) and the reference's bench, one process each, the three taking turns at going first,
# for TB_BENCH_ROUNDS rounds (default 3); the table has each side's median (min-max) over the
# rounds, the ratios ours / reference (the median of the rounds' ratios) and peak RSS, then
# clips/s of the encode and decode rows, the machine, and both sides' command lines. At 2 threads
# on a 2-core AMX machine the bench-small rows took 14 minutes for 3 rounds, the README
# configuration's batch-1 and batch-16 rows 20 minutes for one (the reference's batch 16 most of
# it; its batch-4 rows not timed yet). TB_PEER_PYTHON overrides the reference's interpreter
# (bench/peer/.venv/bin/python).
#
# TB_BENCH_THREADS overrides 2. TB_BENCH_RESULTS=DIR keeps every process's JSON there (one file
# per row and build or side); given a DIR that holds them already, the table is printed again
# from them without measuring. TB_BENCH_ROWS=REGEX runs (or reprints) only the rows whose label
# matches (grep -E), e.g. TB_BENCH_ROWS='^encode|^decode'.
set -euo pipefail
peer=0
if [ "${1:-}" = "--peer" ]; then
  peer=1
  shift
fi
builds=("${1:-build}")
[ "$peer" -eq 0 ] && [ -n "${2:-}" ] && builds+=("$2")
threads=${TB_BENCH_THREADS:-2}
rounds=${TB_BENCH_ROUNDS:-$([ ${#builds[@]} -eq 2 ] || [ "$peer" -eq 1 ] && echo 3 || echo 1)}
rows_filter=${TB_BENCH_ROWS:-}
command -v jq >/dev/null || { echo "run_perf_bench.sh needs jq" >&2; exit 2; }
trainer() { echo "${builds[$1]}/bin/tokenbench-trainer"; }
libtorch() { "$(trainer "$1")" --version | sed -n 's/^LibTorch \([^,]*\),.*/\1/p'; }
# selected LABEL: whether TB_BENCH_ROWS (if set) matches the row.
selected() { [ -z "$rows_filter" ] || grep -qE -- "$rows_filter" <<<"$1"; }
# median_of: the median of a JSON array of numbers on stdin.
median_of='sort | (if length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end)'
# round_ratio NUMERATOR DENOMINATOR: the median over rounds of round r's median_s of one file
# divided by round r's of the other.
round_ratio() {
  jq -s "[.[0], .[1]] | transpose | map(.[0].median_s / .[1].median_s) | $median_of" \
    <(jq -s . "$1") <(jq -s . "$2")
}

# summary FILE: one build's rounds of one row: the median, least and most of the rounds' medians,
# the largest peak RSS (GB), the median GFLOP/s and the share of peak.
summary() {
  jq -s '(map(.median_s) | sort) as $m | ($m | length) as $n |
    {median: (if $n % 2 == 1 then $m[($n - 1) / 2] else ($m[$n / 2 - 1] + $m[$n / 2]) / 2 end),
     min: $m[0], max: $m[-1], rss: (map(.peak_rss_mb) | max / 1024),
     gflops: (map(.gflops) | sort | .[length / 2 | floor]), peak: (.[0].peak_fraction)}' "$1"
}

if [ "$peer" -eq 1 ]; then
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  peer_python=${TB_PEER_PYTHON:-$here/peer/.venv/bin/python}
  peer_bench=$here/peer/reference_bench.py
  results=${TB_BENCH_RESULTS:-$(mktemp -d)}
  mkdir -p "$results"
  trap '[ -n "${TB_BENCH_RESULTS:-}" ] || rm -rf "$results"' EXIT
  # label | arguments both benches take (the reference's VGG16 is random either way)
  peer_rows=(
    "generator step, reconstruction + LFQ losses|--preset bench-small --what gen-step-recon --steps 3"
    "generator step, every default loss|--preset bench-small --what gen-step --random-perceptual --steps 3"
    "discriminator step with R1 penalty|--preset bench-small --what discr-step --steps 3"
    "discriminator step without R1|--preset bench-small --what discr-step --no-r1 --steps 3"
    "encode (no gradient)|--preset bench-small --what encode --steps 5"
    "decode from indices|--preset bench-small --what decode --steps 5"
    "full trainer step (both steps, EMA, optimisers)|--preset bench-small --what train-step --random-perceptual --steps 3"
    "README config, batch 1: full generator step|--preset magvit2-readme --batch 1 --what gen-step --random-perceptual --warmup 0 --steps 1"
    "README config, batch 1: encode|--preset magvit2-readme --batch 1 --what encode --steps 3"
    "README config, batch 4: encode|--preset magvit2-readme --batch 4 --what encode --steps 2"
    "README config, batch 16: encode|--preset magvit2-readme --batch 16 --what encode --warmup 0 --steps 1"
    "README config, batch 1: decode|--preset magvit2-readme --batch 1 --what decode --steps 3"
    "README config, batch 4: decode|--preset magvit2-readme --batch 4 --what decode --steps 2"
    "README config, batch 16: decode|--preset magvit2-readme --batch 16 --what decode --warmup 0 --steps 1"
  )
  # run_side SIDE ARGS: one process of one side; its JSON line on stdout.
  run_side() {
    # shellcheck disable=SC2086
    case $1 in
      fp32) "$(trainer 0)" bench --threads "$threads" $2 ;;
      bf16) "$(trainer 0)" bench --threads "$threads" $2 --precision bf16 ;;
      reference) "$peer_python" "$peer_bench" --threads "$threads" $2 ;;
    esac
  }
  measured=$([ -s "$results/peer.json" ] && echo 1 || echo 0)
  if [ "$measured" -eq 0 ]; then
    [ -x "$(trainer 0)" ] || { echo "run_perf_bench.sh: no $(trainer 0)" >&2; exit 2; }
    [ -x "$peer_python" ] || { echo "run_perf_bench.sh: no $peer_python: run bench/peer/setup.sh first" >&2; exit 2; }
    flags=$(grep -o -w -E 'avx2|avx512f|avx512_bf16|amx_bf16' /proc/cpuinfo | sort -u | paste -sd' ')
    sides=(fp32 reference)
    grep -q -w -E 'avx512_bf16|amx_bf16' <<<"$flags" && sides=(fp32 bf16 reference)
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    for i in "${!peer_rows[@]}"; do
      IFS='|' read -r label args <<<"${peer_rows[$i]}"
      selected "$label" || continue
      for ((r = 0; r < rounds; r++)); do
        # Round r runs side (r + k) mod n k-th: the sides take turns at going first.
        for ((k = 0; k < ${#sides[@]}; k++)); do
          side=${sides[$(((r + k) % ${#sides[@]}))]}
          if ! json=$(run_side "$side" "$args"); then
            echo "run_perf_bench.sh: the $side side failed on: $args" >&2
            exit 1
          fi
          echo "$side round $((r + 1)): $json" >&2
          echo "$json" >>"$results/row$i.$side"
        done
      done
    done
    jq -n --arg cpu "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)" --arg flags "$flags" \
      --argjson cores "$(nproc)" --argjson threads "$threads" --argjson rounds "$rounds" \
      --arg sides "${sides[*]}" --arg before "$load_before" --arg after "$(cut -d' ' -f1-3 /proc/loadavg)" \
      --arg ours "$(libtorch 0)" --arg build "${builds[0]}" \
      '{cpu: $cpu, flags: $flags, cores: $cores, threads: $threads, rounds: $rounds, sides: $sides,
        load_before: $before, load_after: $after, libtorch: $ours, build: $build}' >"$results/peer.json"
  fi
  meta() { jq -r ".$1" "$results/peer.json"; }
  bf16=$(meta sides | grep -q bf16 && echo 1 || echo 0)
  build=$(meta build)
  echo "| row | magvit2-pytorch median (min-max) | Tokenbench fp32 median (min-max) | fp32 ratio | Tokenbench bf16 median (min-max) | bf16 ratio | peak RSS ours / reference |"
  echo "|---|---|---|---|---|---|---|"
  # r(n): n to 2 decimals; cell(summary): "median s (min-max)".
  cell='def r(n): (n * 100 | round) / 100; def cell(s): "\(r(s.median)) s (\(r(s.min))-\(r(s.max)))";'
  commands=""
  throughput=""
  for i in "${!peer_rows[@]}"; do
    IFS='|' read -r label args <<<"${peer_rows[$i]}"
    selected "$label" || continue
    [ -s "$results/row$i.fp32" ] || continue
    [ -s "$results/row$i.reference" ] || continue
    commands+="    $build/bin/tokenbench-trainer bench --threads $(meta threads) $args"$'\n'
    [ "$bf16" -eq 1 ] && commands+="    $build/bin/tokenbench-trainer bench --threads $(meta threads) $args --precision bf16"$'\n'
    commands+="    bench/peer/.venv/bin/python bench/peer/reference_bench.py --threads $(meta threads) $args"$'\n'
    ref=$(summary "$results/row$i.reference")
    ours=$(summary "$results/row$i.fp32")
    ratio=$(round_ratio "$results/row$i.fp32" "$results/row$i.reference")
    half='null'
    half_ratio='null'
    if [ "$bf16" -eq 1 ] && [ -s "$results/row$i.bf16" ]; then
      half=$(summary "$results/row$i.bf16")
      half_ratio=$(round_ratio "$results/row$i.bf16" "$results/row$i.reference")
    fi
    jq -rn --arg name "$label" --argjson ref "$ref" --argjson ours "$ours" --argjson ratio "$ratio" \
      --argjson half "$half" --argjson half_ratio "$half_ratio" "$cell"'
      "| \($name) | \(cell($ref)) | \(cell($ours)) | \(r($ratio))x | \(if $half then cell($half) else "-" end) | \(if $half then "\(r($half_ratio))x" else "-" end) | \(r($ours.rss)) / \(r($ref.rss)) GB |"'
    if grep -q -E -- '--what (encode|decode)' <<<"$args"; then
      batch=$(jq -s '.[0].batch' "$results/row$i.fp32")
      throughput+=$(jq -rn --arg name "$label" --argjson batch "$batch" --argjson ref "$ref" \
        --argjson ours "$ours" --argjson half "$half" "$cell"'
        "| \($name) | \(r($batch / $ref.median)) | \(r($batch / $ours.median)) | \(if $half then r($batch / $half.median) else "-" end) |"')$'\n'
    fi
  done
  if [ -n "$throughput" ]; then
    echo
    echo "| row | magvit2-pytorch clips/s | Tokenbench fp32 clips/s | Tokenbench bf16 clips/s |"
    echo "|---|---|---|---|"
    printf '%s' "$throughput"
  fi
  echo
  echo "Ratios: Tokenbench / magvit2-pytorch, round by round, the median over the rounds (below 1: Tokenbench is faster). Peak RSS: the largest of the rounds, Tokenbench fp32 / the reference."
  [ "$bf16" -eq 1 ] || echo "bf16: - because this CPU has neither avx512_bf16 nor amx_bf16 (/proc/cpuinfo): LibTorch's CPU bf16 would run without hardware support there."
  ref_torch=$(cat "$results"/row*.reference | jq -rs 'map(.torch) | unique | join(", ")')
  echo "Machine: $(meta cpu) ($(meta flags)), $(meta cores) cores; intra-op threads $(meta threads) on each side; $(meta rounds) round(s); load average $(meta load_before) before, $(meta load_after) after$([ "$measured" -eq 1 ] && echo " (reprinted from $results)")."
  echo "Tokenbench: LibTorch $(meta libtorch) ($build). magvit2-pytorch 0.5.1 (bench/peer/setup.sh): torch $ref_torch, Debian's python3-torch."
  echo
  echo "Commands (one process each, the sides taking turns at going first):"
  echo
  echo "$commands"
  exit 0
fi

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
measured=$(compgen -G "$results/row*.build0" >/dev/null && echo 1 || echo 0)
for i in "${!rows[@]}"; do
  IFS='|' read -r label ref ref_rss args <<<"${rows[$i]}"
  selected "$label" || continue
  [ "$measured" -eq 1 ] && [ ! -s "$results/row$i.build0" ] && continue
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

if [ ${#builds[@]} -eq 1 ]; then
  echo "| row | reference | Tokenbench median (min-max) | ratio | peak RSS (reference) | GFLOP/s (% of peak) |"
  echo "|---|---|---|---|---|---|"
else
  echo "| row | reference | LibTorch $(libtorch 0): median (min-max) | LibTorch $(libtorch 1) | $(libtorch 1) / $(libtorch 0) | to the reference | peak RSS $(libtorch 0) / $(libtorch 1) (reference) |"
  echo "|---|---|---|---|---|---|---|"
fi
for i in "${!rows[@]}"; do
  IFS='|' read -r label ref ref_rss _ <<<"${rows[$i]}"
  selected "$label" || continue
  [ -s "$results/row$i.build0" ] || continue
  a=$(summary "$results/row$i.build0")
  rss_ref=$([ "$ref_rss" = "-" ] && echo "" || echo " ($ref_rss GB)")
  if [ ${#builds[@]} -eq 1 ]; then
    jq -r --arg name "$label" --arg ref "$ref" --arg rss "$rss_ref" 'def r(n): (n * 100 | round) / 100;
      "| \($name) | \($ref) s | \(r(.median)) s (\(r(.min))-\(r(.max))) | \(r(.median / ($ref | tonumber)))x | \(r(.rss)) GB\($rss) | \(.gflops | round) (\(.peak * 100 | round)%) |"' <<<"$a"
  else
    b=$(summary "$results/row$i.build1")
    # The ratio pair by pair: round r of build 1 against round r of build 0.
    ratio=$(round_ratio "$results/row$i.build1" "$results/row$i.build0")
    jq -rn --arg name "$label" --arg ref "$ref" --arg rss "$rss_ref" --argjson a "$a" --argjson b "$b" \
      --argjson ratio "$ratio" 'def r(n): (n * 100 | round) / 100;
      "| \($name) | \($ref) s | \(r($a.median)) s (\(r($a.min))-\(r($a.max))) | \(r($b.median)) s (\(r($b.min))-\(r($b.max))) | \(r($ratio))x | \(r($a.median / ($ref | tonumber)))x / \(r($b.median / ($ref | tonumber)))x | \(r($a.rss)) / \(r($b.rss)) GB\($rss) |"'
  fi
done
echo
for b in "${!builds[@]}"; do
  last=$(cat "$results"/row*.build"$b" | tail -1)
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
