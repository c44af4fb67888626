#!/usr/bin/env bash
# quickstart_layout.sh QUICKSTART RUNS: runs QUICKSTART (with TB_RUN_DIR in RUNS, as the caller
# sets it) from a clean RUNS, then fails unless RUNS holds exactly the run directory: no
# events file, checkpoint folder or anything else beside it that a `runs/demo-*` glob would
# also name.
set -euo pipefail
quickstart=$1 runs=$2
rm -rf "$runs"
"$quickstart" >/dev/null
entries=$(ls -A "$runs")
if [[ $entries != "$(basename "$TB_RUN_DIR")" ]]; then
  echo "quickstart left in $runs: $(echo $entries)" >&2
  exit 1
fi
[[ -f $TB_RUN_DIR/config.json ]] || { echo "no run in $TB_RUN_DIR" >&2; exit 1; }
echo "quickstart left one run: $entries"
