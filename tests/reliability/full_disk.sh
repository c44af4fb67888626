#!/usr/bin/env bash
# A full disk, three ways, on a small tmpfs of its own: full from the start, full while
# checkpoints are written, full while metrics and events are appended. Each run must fail with a
# `disk_full` error whose hint says how much room the next checkpoint needs, leave every file
# whole (events.jsonl and metrics.jsonl end with a complete line, no half-written checkpoint is
# kept) and, once there is room, resume from its newest complete checkpoint.
# Usage: full_disk.sh TRAINER WORKDIR
# The tmpfs is mounted in a mount namespace of its own (`unshare -rm` as any user, `unshare -m`
# as root), so it vanishes with the test; where neither is allowed the test is skipped (77).
set -uo pipefail
trainer=$1
work=$2

if [[ ${TB_FULL_DISK_NAMESPACE:-} != 1 ]]; then
  command -v jq >/dev/null || { echo "skipping: jq is not installed"; exit 77; }
  rm -rf "$work"
  mkdir -p "$work"
  for how in -rm -m; do
    if unshare "$how" true 2>/dev/null; then
      TB_FULL_DISK_NAMESPACE=1 exec unshare "$how" "$0" "$@"
    fi
  done
  echo "skipping: no mount namespace here (unshare -rm and unshare -m refused), so no tmpfs of its own"
  exit 77
fi

disk=$work/disk
mkdir -p "$disk"
if ! mount -t tmpfs -o size=4k tmpfs "$disk" 2>/dev/null; then
  echo "skipping: mounting a tmpfs is not allowed here"
  exit 77
fi
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
tiny=(--preset demo --set data.image_size=16 --set model.init_dim=8 --set model.max_dim=16
      --set train.log_every=1 --set train.valid_every=0 --set train.sample_every=0 --set train.threads=1
      --set train.ema_start_step=0 --set train.checkpoint_total_limit=0)
# A file of JSON lines that are whole: one value a line (none cut short, none glued to the
# next), ending with a newline. Missing or empty counts as whole.
whole() {
  [[ ! -s $1 ]] && return 0
  local values
  values=$(jq -c . "$1" 2>/dev/null | wc -l) || return 1
  [[ $values -eq $(wc -l <"$1") && $(tail -c1 "$1" | od -An -tx1 | tr -d ' ') == 0a ]]
}
error_of() { grep '"type":"error"' "$1" | tail -1; }
# Checks what every full-disk ending must leave: the error, its hint, whole files.
check_full() {
  local name=$1 code=$2 out=$3 run=$4
  check "$name: exits 1" "[ $code -eq 1 ]"
  check "$name: error disk_full naming a file of the run" \
    "error_of '$out' | jq -e '.code == \"disk_full\" and (.message | contains(\"$run\"))' >/dev/null"
  check "$name: the hint says how much the next checkpoint needs" \
    "error_of '$out' | jq -e '.hint | test(\"next checkpoint needs about [0-9.]+ MB\")' >/dev/null"
  check "$name: ends with done failed" "tail -1 '$out' | grep -q '\"type\":\"done\",\"status\":\"failed\"'"
  check "$name: events.jsonl is whole lines" "whole '$run/events.jsonl'"
  check "$name: metrics.jsonl is whole lines" "whole '$run/metrics.jsonl'"
  check "$name: no half-written checkpoint left" "! ls -d '$run'/checkpoints/.step_* >/dev/null 2>&1"
  check "$name: every checkpoint kept is complete" \
    "for c in '$run'/checkpoints/step_*; do [ -e \"\$c\" ] || continue; [ -f \"\$c/COMPLETE\" ] || exit 1; done"
}
# Room again: the run resumes from its newest complete checkpoint (or from the start without
# one), and the resumed run's events are whole lines too.
check_resume() {
  local name=$1 run=$2
  mount -o remount,size=64m "$disk"
  local newest
  newest=$(ls "$run/checkpoints" 2>/dev/null | sed -n 's/^step_\([0-9]*\)$/\1/p' | sort -n | tail -1)
  "$trainer" train --resume --run-dir "$run" --set train.max_steps=$((${newest:-0} + 2)) \
    >"$run.resume.out" 2>"$run.resume.err"
  local code=$?
  check "$name: resumes once there is room" "[ $code -eq 0 ]"
  if [[ -n $newest ]]; then
    check "$name: from the newest complete checkpoint, step $newest" \
      "grep -q 'resumed from checkpoints/step_$newest\$' '$run.resume.err'"
  fi
  check "$name: events.jsonl is whole lines after the resume" "whole '$run/events.jsonl'"
  check "$name: the resumed run's hello is a line of its own" \
    "[ \$(jq -c 'select(.type == \"hello\")' '$run/events.jsonl' | wc -l) -eq 2 ]"
}

# 1. Full from the start: a 4 KiB file system has no room for config.json.
run=$disk/start
"$trainer" train "${tiny[@]}" --set train.max_steps=5 --run-dir "$run" >"$work/start.out" 2>"$work/start.err"
check_full "full from the start" $? "$work/start.out" "$run"
grep '"type":"error"' "$work/start.out" | sed 's/^/  /'

# 2. Full while checkpoints are written: one a step, none deleted, on 1.5 MiB.
mount -o remount,size=1536k "$disk"
run=$disk/checkpoints
"$trainer" train "${tiny[@]}" --set train.max_steps=100000 --set train.checkpoint_every=1 --run-dir "$run" \
  >"$work/checkpoints.out" 2>"$work/checkpoints.err"
check_full "full at a checkpoint" $? "$work/checkpoints.out" "$run"
grep '"type":"error"' "$work/checkpoints.out" | sed 's/^/  /'
check "full at a checkpoint: some checkpoints were written first" "ls -d '$run'/checkpoints/step_* >/dev/null 2>&1"
check_resume "full at a checkpoint" "$run"

# 3. Full while metrics and events are appended: no checkpoint before the end, and a file that
# leaves 16 KiB free.
umount "$disk"
mount -t tmpfs -o size=1m tmpfs "$disk"
run=$disk/metrics
head -c $((1024 * 1024 - 16 * 1024)) /dev/zero >"$disk/filler"
"$trainer" train "${tiny[@]}" --set train.max_steps=100000 --set train.checkpoint_every=0 --run-dir "$run" \
  >"$work/metrics.out" 2>"$work/metrics.err"
check_full "full at the metrics" $? "$work/metrics.out" "$run"
grep '"type":"error"' "$work/metrics.out" | sed 's/^/  /'
rm -f "$disk/filler"
check_resume "full at the metrics" "$run"

exit $fail
