#!/usr/bin/env bash
# Distributed figures (issue 5), from real trainings of magvit2-small on procedural clips, one
# machine, Gloo over loopback:
#   - step time: 1 rank at batch 4 on all threads against 2 ranks at batch 2 each (the same
#     global batch; each rank gets threads/2);
#   - communication per step under ddp: gradient buckets of distributed.bucket_mb (25 MB, the
#     default) against one all-reduce per parameter (bucket_mb of one byte);
#   - optimizer state per rank: ddp (every rank holds all of it) against zero1 (about 1/N each).
# Per-step figures are medians of perf/step_s and perf/comm_s over the steps after the first two.
# Usage: bench/run_distributed_bench.sh [BUILD_DIR] [STEPS] (defaults: build, 12).
set -euo pipefail
build=${1:-build}
steps=${2:-12}
trainer=$build/bin/tokenbench-trainer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
threads=$(nproc)

# train NAME [--set ...]: a short run; its metrics and rank logs stay in $work/NAME.
train() {
  local name=$1
  shift
  "$trainer" train --preset magvit2-small --run-dir "$work/$name" --set train.max_steps="$steps" \
    --set train.log_every=1 --set train.valid_every=0 --set train.sample_every=0 \
    --set train.checkpoint_every=0 --set train.ema=false "$@" >/dev/null 2>"$work/$name.err" ||
    { echo "run_distributed_bench: $name failed:" >&2; tail -5 "$work/$name.err" >&2; exit 1; }
}

# median NAME KEY: median of a metric over steps 3..N.
median() {
  grep -o "\"$2\":[-0-9.e+]*" "$work/$1/metrics.jsonl" | tail -n +3 | cut -d: -f2 | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# state NAME RANK: optimizer state bytes that rank logged after its first step.
state() {
  grep -o "optimizer state on this rank: [0-9]*" "$work/$1/logs/rank_$2.log" 2>/dev/null | grep -o "[0-9]*$" ||
    grep -o "optimizer state on this rank: [0-9]*" "$work/$1.err" | grep -o "[0-9]*$"
}

train one --set train.batch_size=4 --set train.threads="$threads"
two=(--set train.batch_size=2 --set distributed.nproc_per_node=2)
train ddp "${two[@]}" --set distributed.strategy=ddp
train ddp_per_param "${two[@]}" --set distributed.strategy=ddp --set distributed.bucket_mb=0.000001
train zero1 "${two[@]}" --set distributed.strategy=zero1

mib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "magvit2-small, global batch 4, $steps steps, $threads cores, $(date -u +%Y-%m-%d)"
echo
echo "| measurement | figure |"
echo "|---|---|"
echo "| step time, 1 rank x batch 4 ($threads threads) | $(ms "$(median one perf/step_s)") ms |"
echo "| step time, 2 ranks x batch 2 (ddp, $((threads / 2 > 0 ? threads / 2 : 1)) thread(s) each) | $(ms "$(median ddp perf/step_s)") ms |"
echo "| communication per step, ddp, 25 MB buckets | $(ms "$(median ddp perf/comm_s)") ms |"
echo "| communication per step, ddp, one all-reduce per parameter | $(ms "$(median ddp_per_param perf/comm_s)") ms |"
echo "| per-parameter / bucketed communication | $(ratio "$(median ddp_per_param perf/comm_s)" "$(median ddp perf/comm_s)")x |"
ddp_state=$(state ddp 0)
echo "| optimizer state per rank, ddp (rank 0 / rank 1) | $(mib "$ddp_state") / $(mib "$(state ddp 1)") MiB |"
echo "| optimizer state per rank, zero1 (rank 0 / rank 1) | $(mib "$(state zero1 0)") / $(mib "$(state zero1 1)") MiB |"
