#!/usr/bin/env bash
# The README's run command: installs what is missing, builds the full configuration into
# build/, then runs the default job: a short real training of the `demo` preset on the built-in
# procedural clips, a summary comparing the start of the run with its end, and a review of
# the trained tokenizer against the untrained one and the classic VQ reference codec on the
# same clips (compare).
#
# Everything the job writes goes inside the run directory (the trainer keeps its events in
# <run>/events.jsonl, the untrained tokenizer goes to <run>/compare/untrained), so that
# `tokenbench --run-dir runs/demo-*` names the one run. TB_RUN_DIR chooses the run directory;
# TB_QUICKSTART_TRAINER runs the job with that trainer and skips installing and building (for
# a build you already have, and for the test of what the job leaves behind).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n ${TB_QUICKSTART_TRAINER:-} ]]; then
  trainer=$TB_QUICKSTART_TRAINER
else
  scripts/install-deps.sh
  scripts/build.sh build
  trainer=build/bin/tokenbench-trainer
fi

run_dir=${TB_RUN_DIR:-runs/demo-$(date +%Y%m%d-%H%M%S)}
echo "== Model (tokenbench-trainer model-info --preset demo)"
"$trainer" model-info --preset demo
echo "== Training the demo preset into $run_dir (its events: $run_dir/events.jsonl)"
mkdir -p "$(dirname "$run_dir")"
"$trainer" train --preset demo --run-dir "$run_dir" >/dev/null
echo "== Summary (tokenbench-trainer summary --run-dir $run_dir)"
"$trainer" summary --run-dir "$run_dir"
echo "== Comparison on the same clips: the untrained demo tokenizer, the classic VQ reference"
echo "   (k-means of pixel blocks at the same token grid and bits, fitted before training into"
echo "   $run_dir/reference) and the trained tokenizer"
"$trainer" init --preset demo --out "$run_dir/compare/untrained" >/dev/null
"$trainer" compare --checkpoint untrained="$run_dir/compare/untrained" \
  --checkpoint classic-vq="$run_dir/reference" --checkpoint trained="$run_dir" \
  --out "$run_dir/compare" --clips 4
echo "Review: $run_dir/compare/grid.png, clip_*.gif, metrics.json"
echo "Open it in the window: build/bin/tokenbench --run-dir $run_dir"
