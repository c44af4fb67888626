#!/usr/bin/env bash
# scripts/make-screenshots.sh [BUILD_DIR]: the screenshots of docs/ (docs/images/<page>.png for
# setup, monitor, samples, compare and runs), made by the window itself, offscreen, from a real
# run: a short training of the `demo` preset, a second shorter run so the Runs page lists more
# than one, and a comparison of the untrained and trained demo tokenizers and the classic VQ
# reference in <run>/compare.
#
#   tokenbench --run-dir DIR --page NAME --screenshot docs/images/NAME.png
#
# Needs a full build (default build/: tokenbench and tokenbench-trainer). Takes a few minutes on
# 2 cores (the training). The work folder is kept when TB_SCREENSHOT_DIR names one.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
build=$(cd "${1:-build}" && pwd)
trainer=$build/bin/tokenbench-trainer
front=$build/bin/tokenbench
for exe in "$trainer" "$front"; do
  [[ -x $exe ]] || { echo "make-screenshots: $exe is missing; build first (scripts/build.sh build)" >&2; exit 2; }
done

if [[ -n ${TB_SCREENSHOT_DIR:-} ]]; then
  work=$TB_SCREENSHOT_DIR
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
runs=$work/runs
run=$runs/demo
mkdir -p "$runs" "$repo/docs/images"

if [[ ! -f $run/metrics.jsonl ]]; then
  echo "== training the demo preset into $run"
  "$trainer" train --preset demo --run-dir "$run" >"$work/demo.events"
  echo "== a second, shorter run: $runs/demo-lr1e-3"
  "$trainer" train --preset demo --run-dir "$runs/demo-lr1e-3" --set train.max_steps=100 \
    --set train.lr=1e-3 --set train.valid_every=50 --set train.sample_every=50 >"$work/second.events"
  echo "== comparing the untrained demo tokenizer, the classic VQ reference and the trained one: $run/compare"
  "$trainer" init --preset demo --out "$work/untrained" >/dev/null
  "$trainer" compare --checkpoint untrained="$work/untrained" --checkpoint classic-vq="$run/reference" \
    --checkpoint trained="$run" --out "$run/compare" --clips 4 >/dev/null
fi

# The window, offscreen, with its settings kept out of the user's (QSettings under XDG_CONFIG_HOME),
# started in the work folder so the Runs page's default runs folder (runs/) is the one above.
export QT_QPA_PLATFORM=offscreen
export XDG_CONFIG_HOME=$work/config
for page in setup monitor samples compare runs; do
  out=$repo/docs/images/$page.png
  (cd "$work" && "$front" --trainer "$trainer" --run-dir "$run" --page "$page" --screenshot "$out")
  echo "wrote docs/images/$page.png"
done
