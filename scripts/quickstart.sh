#!/usr/bin/env bash
# The README's run command: installs what is missing, builds the full configuration into
# build/, and runs the default job on the built-in procedural data.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build

trainer=build/bin/tokenbench-trainer
run_dir=${TB_RUN_DIR:-runs/demo}
mkdir -p "$run_dir"
echo "== The default job: preset 'demo' in $run_dir"
"$trainer" print-config --preset demo >"$run_dir/config.json"
"$trainer" validate-config "$run_dir/config.json"
if "$trainer" --help | grep -q '^  model-info'; then
  echo "== Model summary (tokenbench-trainer model-info)"
  "$trainer" model-info --config "$run_dir/config.json"
  echo "== Initialised checkpoint (tokenbench-trainer init)"
  "$trainer" init --config "$run_dir/config.json" --out "$run_dir/checkpoints/step_0"
fi
if "$trainer" --help | grep -q '^  train'; then
  "$trainer" train --config "$run_dir/config.json" --run-dir "$run_dir"
else
  echo "== Training is not in this build yet: the training engine is the next piece of work."
  echo "   What ran above is real: the demo configuration, validated, and the model built from it."
fi
