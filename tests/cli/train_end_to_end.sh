#!/usr/bin/env bash
# End to end through the real binary: train, refuse, resume, stop by signal, stop by stdin,
# time budget, summary. Usage: train_end_to_end.sh TRAINER WORKDIR
set -uo pipefail
trainer=$1
work=$2
rm -rf "$work"; mkdir -p "$work"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
tiny=(--preset demo --set data.image_size=16 --set model.init_dim=8 --set model.max_dim=16
      --set train.log_every=1 --set train.valid_every=0 --set train.threads=1)

# 1. A short run: stdout carries only protocol events, ending in done/completed.
"$trainer" train "${tiny[@]}" --set train.max_steps=3 --run-dir "$work/a" >"$work/a.out" 2>"$work/a.err"
code=$?
check "short run exits 0" "[ $code -eq 0 ]"
check "stdout holds only events" "[ \$(grep -vc '^{\"v\":1,\"type\":' '$work/a.out') -eq 0 ]"
check "first event is hello" "head -1 '$work/a.out' | grep -q '\"type\":\"hello\"'"
check "last event is done completed at step 3" "tail -1 '$work/a.out' | grep -q '\"type\":\"done\",\"status\":\"completed\",\"step\":3'"
check "checkpoint event names a path inside the run" "grep -q '\"type\":\"checkpoint\",\"step\":3,\"path\":\"checkpoints/step_3\"' '$work/a.out'"
check "checkpoint is complete" "[ -f '$work/a/checkpoints/step_3/COMPLETE' ] && [ -f '$work/a/checkpoints/step_3/model.safetensors' ]"
check "metrics.jsonl has 3 training rows" "[ \$(grep -c 'train/recon_loss' '$work/a/metrics.jsonl') -eq 3 ]"

# 2. The same directory without --resume is refused.
"$trainer" train "${tiny[@]}" --run-dir "$work/a" >"$work/b.out" 2>"$work/b.err"
code=$?
check "existing run without --resume exits 2" "[ $code -eq 2 ] && grep -q 'already holds a run' '$work/b.err'"

# 3. Resume with a changed model is refused, naming the key.
"$trainer" train --resume --run-dir "$work/a" --set model.init_dim=4 >"$work/c.out" 2>"$work/c.err"
code=$?
check "resume with a changed model exits 2 naming model.init_dim" "[ $code -eq 2 ] && grep -q 'model.init_dim' '$work/c.err'"

# 4. Resume with a longer run (a safe change) continues from step 3 to 5.
"$trainer" train --resume --run-dir "$work/a" --set train.max_steps=5 >"$work/d.out" 2>"$work/d.err"
code=$?
check "resume exits 0 and ends at step 5" "[ $code -eq 0 ] && tail -1 '$work/d.out' | grep -q '\"status\":\"completed\",\"step\":5'"
check "resumed run logs from step 4" "[ \$(grep -c 'train/recon_loss' '$work/a/metrics.jsonl') -eq 5 ]"
"$trainer" summary --run-dir "$work/a" >"$work/s.out"
check "summary reports step 5 and both checkpoints" "grep -q '\"step\": 5' '$work/s.out' && tr -d ' \n' <'$work/s.out' | grep -q '\"checkpoints\":\[3,5\]'"

# 5. SIGTERM: checkpoint, done stopped, exit 0.
"$trainer" train "${tiny[@]}" --set train.max_steps=100000 --run-dir "$work/e" >"$work/e.out" 2>"$work/e.err" &
pid=$!
for _ in $(seq 1 600); do grep -q '"type":"progress"' "$work/e.out" 2>/dev/null && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
code=$?
check "SIGTERM exits 0 with done stopped" "[ $code -eq 0 ] && tail -1 '$work/e.out' | grep -q '\"status\":\"stopped\"'"
check "SIGTERM left a complete checkpoint" "ls '$work/e/checkpoints'/step_*/COMPLETE >/dev/null 2>&1"

# 6. --control-stdin: the end of stdin (the parent is gone) stops the run cleanly.
"$trainer" train "${tiny[@]}" --set train.max_steps=100000 --control-stdin --run-dir "$work/f" \
  </dev/null >"$work/f.out" 2>"$work/f.err"
code=$?
check "closed control stdin stops with exit 0" "[ $code -eq 0 ] && tail -1 '$work/f.out' | grep -q '\"status\":\"stopped\"'"

# 7. The control lines of tests/golden/control_v1.ndjson (the bytes the window writes): a
# checkpoint line writes a checkpoint and goes on, a stop line stops the run; an unknown one is
# named on stderr and ignored.
golden_control="$(dirname "$0")/../golden/control_v1.ndjson"
# Each line goes once the run shows it can act on it (a loaded machine may take seconds to get
# to step 1): the checkpoint line after the first progress event, the stop after its checkpoint.
wait_for() {  # PATTERN: until g.out holds it (60 s at most)
  for _ in $(seq 1 600); do grep -q "$1" "$work/g.out" 2>/dev/null && return; sleep 0.1; done
}
{ wait_for '"type":"progress"'; sed -n 2p "$golden_control"; echo '{"v":1,"type":"pause"}'
  wait_for '"type":"checkpoint"'; sed -n 1p "$golden_control"; sleep 30; } |
  "$trainer" train "${tiny[@]}" --set train.max_steps=100000 --set train.checkpoint_every=0 \
  --control-stdin --run-dir "$work/g" >"$work/g.out" 2>"$work/g.err"
check "stop control line stops the run" "tail -1 '$work/g.out' | grep -q '\"status\":\"stopped\"'"
check "checkpoint control line writes a checkpoint before the stop" "[ \$(grep -c '\"type\":\"checkpoint\"' '$work/g.out') -ge 2 ]"
check "unknown control line is named" "grep -q 'unknown control message type \"pause\"' '$work/g.err'"

# 7b. --config - and --control-stdin both want stdin: refused (the run used to stop at once).
echo '{}' | "$trainer" train --config - --control-stdin --run-dir "$work/g2" >/dev/null 2>"$work/g2.err"
code=$?
check "--config - with --control-stdin exits 2 naming both" "[ $code -eq 2 ] && grep -q 'config - and --control-stdin' '$work/g2.err'"

# 8. --time-budget ends the run cleanly well before max_steps.
"$trainer" train "${tiny[@]}" --set train.max_steps=100000 --time-budget 3s --run-dir "$work/h" >"$work/h.out" 2>"$work/h.err"
code=$?
check "time budget exits 0 with done completed" "[ $code -eq 0 ] && tail -1 '$work/h.out' | grep -q '\"status\":\"completed\"'"
check "time budget wrote a final checkpoint" "ls '$work/h/checkpoints'/step_*/COMPLETE >/dev/null 2>&1"
"$trainer" train "${tiny[@]}" --time-budget soon --run-dir "$work/i" >/dev/null 2>"$work/i.err"
code=$?
check "bad --time-budget exits 2" "[ $code -eq 2 ] && grep -q 'time-budget' '$work/i.err'"

# 9. SIGKILL while checkpoints are being written (one per step): whatever instant the kill hits,
# the run resumes from its newest complete checkpoint, and a stale lock does not block it.
for delay in 0.7 1.3 2.1; do
  "$trainer" train "${tiny[@]}" --set train.max_steps=100000 --set train.checkpoint_every=1 \
    --resume --run-dir "$work/k" >>"$work/k.out" 2>>"$work/k.err" &
  pid=$!
  for _ in $(seq 1 600); do grep -q '"type":"checkpoint"' "$work/k.out" 2>/dev/null && break; sleep 0.1; done
  sleep "$delay"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
done
newest=$(ls "$work/k/checkpoints" | grep '^step_[0-9]*$' | sed 's/step_//' | sort -n | tail -1)
"$trainer" train --resume --run-dir "$work/k" --set train.max_steps=$((newest + 2)) >"$work/k2.out" 2>"$work/k2.err"
code=$?
check "resume after SIGKILL mid-checkpoint continues to step $((newest + 2))" \
  "[ $code -eq 0 ] && tail -1 '$work/k2.out' | grep -q '\"status\":\"completed\",\"step\":$((newest + 2))'"

# 10. A run directory that cannot be created (its parent is a file): hello, then an error naming it.
"$trainer" train "${tiny[@]}" --run-dir "$work/a/config.json/run" >"$work/m.out" 2>"$work/m.err"
code=$?
check "uncreatable run dir exits 1 with run_dir_unwritable naming it" \
  "[ $code -eq 1 ] && grep -q '\"code\":\"run_dir_unwritable\".*config.json/run' '$work/m.out' && tail -1 '$work/m.out' | grep -q '\"status\":\"failed\"'"

# 11. The GAN switched on later in the same run: resume with an earlier loss.discr_start_step.
gan=(--set loss.adversarial_weight=0.5 --set model.discriminator.type=patchgan --set model.discriminator.dim=8
     --set model.discriminator.patchgan_layers=2)
"$trainer" train "${tiny[@]}" "${gan[@]}" --set loss.discr_start_step=1000 --set train.max_steps=2 \
  --run-dir "$work/n" >"$work/n.out" 2>"$work/n.err"
"$trainer" train --resume --run-dir "$work/n" --set loss.discr_start_step=2 --set train.max_steps=4 \
  >"$work/n2.out" 2>"$work/n2.err"
code=$?
check "resume with an earlier discr_start_step trains the GAN from there" \
  "[ $code -eq 0 ] && ! grep -q 'gan_loss' <(head -2 '$work/n/metrics.jsonl') && [ \$(grep -c '\"train/gan_loss\"' '$work/n/metrics.jsonl') -eq 2 ]"

if [ $fail -ne 0 ]; then
  for f in "$work"/*.err; do echo "--- $f"; tail -5 "$f"; done
  exit 1
fi
rm -rf "$work"
echo "all train end-to-end checks passed"
