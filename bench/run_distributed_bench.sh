#!/usr/bin/env bash
# Distributed figures (issues 5 and 24), from real trainings on procedural clips, one machine,
# Gloo over loopback.
#
# Part 1, magvit2-small at global batch 4 (STEPS steps):
#   - step time: 1 rank at batch 4 on all threads, and ddp, zero1, zero2, zero3 on 2 ranks at
#     batch 2 and on 4 ranks at batch 1 (each rank gets threads / ranks, at least 1);
#   - communication per step (perf/comm_s) of each, and of ddp with one all-reduce per parameter;
#   - bytes of parameters, gradients and optimizer state each rank holds after its first step (its
#     log's "held on this rank" line, tensors counted by storage), and each rank's peak resident
#     memory (its log's "done" line).
# Part 2, the README configuration's models (magvit2-readme: the 117.8M-parameter tokenizer and
# its 33.4M-parameter discriminator, the GAN on from the first step, activation checkpointing
# "all", batch 1 per rank, README_STEPS steps): step time (against ddp at the same world size),
# bytes held and peak resident memory per rank for one process and for ddp, zero1, zero2, zero3
# on each of README_RANKS ranks (default "2 4"). Clips are README_SIZE pixels and README_FRAMES
# frames (the preset's 128 and 17 when set so; by default 64 and 9, which keeps 4 ranks of it in
# this machine's memory: the model state, what the strategies shard, is the same).
#
# Per-step figures are medians over the steps after the first two. Set PART=1 or PART=2 for one.
# Usage: bench/run_distributed_bench.sh [BUILD_DIR] [STEPS] (defaults: build, 12).
set -euo pipefail
build=${1:-build}
steps=${2:-12}
part=${PART:-all}
readme_steps=${README_STEPS:-4}
readme_ranks=${README_RANKS:-2 4}
readme_size=${README_SIZE:-64}
readme_frames=${README_FRAMES:-9}
trainer=$build/bin/tokenbench-trainer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
threads=$(nproc)

# train NAME PRESET STEPS [--set ...]: a short run; its metrics and rank logs stay in $work/NAME.
train() {
  local name=$1 preset=$2 n=$3
  shift 3
  "$trainer" train --preset "$preset" --run-dir "$work/$name" --set train.max_steps="$n" \
    --set train.log_every=1 --set train.valid_every=0 --set train.sample_every=0 \
    --set train.checkpoint_every=0 --set train.ema=false "$@" >/dev/null 2>"$work/$name.err" ||
    { echo "run_distributed_bench: $name failed:" >&2; tail -5 "$work/$name.err" >&2; exit 1; }
}

# median NAME KEY: median of a metric over steps 3..N.
median() {
  grep -o "\"$2\":[-0-9.e+]*" "$work/$1/metrics.jsonl" | tail -n +3 | cut -d: -f2 | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# held NAME RANK FIELD: bytes of parameters|gradients|optimizer state that rank held after its
# first step; peak NAME RANK: its peak resident bytes. A one-process run logs to its .err only.
rank_log() { if [ -f "$work/$1/logs/rank_$2.log" ] && grep -q "held on this rank" "$work/$1/logs/rank_$2.log"; then cat "$work/$1/logs/rank_$2.log"; else cat "$work/$1.err"; fi; }
held() { rank_log "$1" "$2" | grep -o "$3 [0-9]* bytes" | head -1 | grep -o "[0-9]*"; }
peak() { rank_log "$1" "$2" | grep -o "peak resident memory [0-9]*" | grep -o "[0-9]*$"; }

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
gib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1073741824 }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.0f", s * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# per_rank NAME RANKS FORMAT FIELD...: "r0 / r1 / ..." of a figure over the ranks.
per_rank() {
  local name=$1 ranks=$2 format=$3 out="" r
  shift 3
  for ((r = 0; r < ranks; r++)); do
    out+="${out:+ / }$($format "$("$@" "$name" "$r")")"
  done
  echo "$out"
}
held_of() { held "$2" "$3" "$1"; }  # held_of FIELD NAME RANK
row_held() {  # row_held NAME RANKS LABEL
  echo "| $3 | $(per_rank "$1" "$2" mib held_of parameters) | $(per_rank "$1" "$2" mib held_of gradients) | $(per_rank "$1" "$2" mib held_of "optimizer state") | $(per_rank "$1" "$2" gib peak) |"
}

if [ "$part" = all ] || [ "$part" = 1 ]; then
  train one magvit2-small "$steps" --set train.batch_size=4 --set train.threads="$threads"
  for ranks in 2 4; do
    for strategy in ddp zero1 zero2 zero3; do
      train "${strategy}_$ranks" magvit2-small "$steps" --set train.batch_size=$((4 / ranks)) \
        --set distributed.nproc_per_node="$ranks" --set distributed.strategy="$strategy"
    done
  done
  train ddp_per_param magvit2-small "$steps" --set train.batch_size=2 --set distributed.nproc_per_node=2 \
    --set distributed.strategy=ddp --set distributed.bucket_mb=0.000001

  echo "magvit2-small, global batch 4, $steps steps, $threads cores, $(date -u +%Y-%m-%d)"
  echo
  echo "| run | step time | vs ddp | communication per step |"
  echo "|---|---|---|---|"
  echo "| 1 rank x batch 4 ($threads threads) | $(ms "$(median one perf/step_s)") ms | | |"
  for ranks in 2 4; do
    base=$(median "ddp_$ranks" perf/step_s)
    for strategy in ddp zero1 zero2 zero3; do
      echo "| $strategy, $ranks ranks x batch $((4 / ranks)) | $(ms "$(median "${strategy}_$ranks" perf/step_s)") ms | $(ratio "$(median "${strategy}_$ranks" perf/step_s)" "$base")x | $(ms "$(median "${strategy}_$ranks" perf/comm_s)") ms |"
    done
  done
  echo "| ddp, 2 ranks, one all-reduce per parameter | $(ms "$(median ddp_per_param perf/step_s)") ms | $(ratio "$(median ddp_per_param perf/step_s)" "$(median ddp_2 perf/step_s)")x | $(ms "$(median ddp_per_param perf/comm_s)") ms |"
  echo
  echo "Held per rank after the first step (MiB, rank 0 / rank 1 / ...), peak resident memory per rank (GiB):"
  echo
  echo "| run | parameters | gradients | optimizer state | peak RSS |"
  echo "|---|---|---|---|---|"
  row_held one 1 "1 rank"
  for ranks in 2 4; do
    for strategy in ddp zero1 zero2 zero3; do row_held "${strategy}_$ranks" "$ranks" "$strategy, $ranks ranks"; done
  done
  echo
fi

if [ "$part" = all ] || [ "$part" = 2 ]; then
  readme=(--set data.image_size="$readme_size" --set data.num_frames="$readme_frames" --set train.batch_size=1
    --set train.grad_accum=1 --set loss.discr_start_step=0 --set 'train.activation_checkpointing=["all"]')
  train readme_1 magvit2-readme "$readme_steps" "${readme[@]}" --set train.threads="$threads"
  for ranks in $readme_ranks; do
    for strategy in ddp zero1 zero2 zero3; do
      train "readme_${strategy}_$ranks" magvit2-readme "$readme_steps" "${readme[@]}" \
        --set distributed.nproc_per_node="$ranks" --set distributed.strategy="$strategy"
    done
  done
  echo "magvit2-readme models (tokenizer and discriminator), clips of $readme_frames x ${readme_size}x$readme_size, batch 1 per rank, $readme_steps steps, $threads cores, $(date -u +%Y-%m-%d)"
  echo
  echo "| run | step time | vs ddp |"
  echo "|---|---|---|"
  echo "| 1 process ($threads threads) | $(ms "$(median readme_1 perf/step_s)") ms | |"
  for ranks in $readme_ranks; do
    base=$(median "readme_ddp_$ranks" perf/step_s)
    for strategy in ddp zero1 zero2 zero3; do
      echo "| $strategy, $ranks ranks | $(ms "$(median "readme_${strategy}_$ranks" perf/step_s)") ms | $(ratio "$(median "readme_${strategy}_$ranks" perf/step_s)" "$base")x |"
    done
  done
  echo
  echo "Held per rank after the first step (MiB, rank 0 / rank 1 / ...), peak resident memory per rank (GiB):"
  echo
  echo "| run | parameters | gradients | optimizer state | peak RSS |"
  echo "|---|---|---|---|---|"
  row_held readme_1 1 "1 process"
  for ranks in $readme_ranks; do
    for strategy in ddp zero1 zero2 zero3; do
      row_held "readme_${strategy}_$ranks" "$ranks" "$strategy, $ranks ranks"
    done
  done
fi
