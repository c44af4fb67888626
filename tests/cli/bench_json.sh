#!/usr/bin/env bash
# bench_json.sh TRAINER: `tokenbench-trainer bench` prints one JSON object with every field and
# sane values for each --what, on the demo preset and a tiny configuration with GAN and
# (random-weight) perceptual loss.
set -euo pipefail
trainer=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v jq >/dev/null || { echo "skipping: jq is not installed"; exit 77; }
failed=0
check() {  # check LABEL JSON FILTER: FILTER (a jq boolean) holds on JSON
  if ! jq -e "$3" <<<"$2" >/dev/null; then
    echo "FAIL $1: $3"
    echo "  $2"
    failed=1
  fi
}
run() {  # run LABEL ARGS...: one bench run, its stdout a single JSON line
  local label=$1
  shift
  local out
  out=$("$trainer" bench --steps 1 --warmup 1 --threads 1 "$@" 2>/tmp/bench_json_err.$$) || {
    echo "FAIL $label: exit $?"; cat /tmp/bench_json_err.$$; failed=1; return; }
  [[ $(wc -l <<<"$out") -eq 1 ]] || { echo "FAIL $label: more than one line"; failed=1; }
  check "$label" "$out" '[.what, .config, .median_s, .min_s, .max_s, .steps, .threads, .input_shape,
    .peak_rss_mb, .flops_per_step, .gflops, .gemm_peak_gflops, .conv_peak_gflops, .peak_fraction, .blas] | all(. != null)'
  check "$label" "$out" '.median_s > 0 and .min_s <= .median_s and .median_s <= .max_s and .steps == 1'
  check "$label" "$out" '.threads == 1 and .peak_rss_mb > 10 and .peak_rss_mb < 100000'
  check "$label" "$out" '.flops_per_step > 1e6 and .gflops > 0 and .gemm_peak_gflops > 0.1 and .conv_peak_gflops > 0.1'
  check "$label" "$out" '(.blas | length) > 0'
  # The CPU's units (cpuid) and, on the CPU, oneDNN's instruction set beside them.
  check "$label" "$out" '(.cpu | test("^(AVX2|no AVX2)")) and (.precision | IN("fp32", "bf16"))'
  echo "$out"
  LAST=$out
}
# Without --batch a bench step takes the preset's train.batch_size clips.
batch=$("$trainer" print-config --preset demo | jq -e '.train.batch_size')
for what in gen-step-recon gen-step encode decode train-step; do
  run "demo $what" --preset demo --what "$what"
  check "demo $what" "$LAST" ".what == \"$what\" and .input_shape == [$batch, 3, 5, 32, 32] and .gan == false"
done
run "demo batch 2" --preset demo --what gen-step-recon --batch 2
check "demo batch 2" "$LAST" '.input_shape == [2, 3, 5, 32, 32]'
# A training step sees the training windows (quick-start: 9 frames, 32x32 crops of 64x64 clips);
# encode sees whole clips.
window=$("$trainer" print-config --preset quick-start | jq -c '.data | [.train_frames, .train_crop, .train_crop]')
whole=$("$trainer" print-config --preset quick-start | jq -c '.data | [.num_frames, .image_size, .image_size]')
run "quick-start train-step" --preset quick-start --what train-step --batch 1
check "quick-start train-step" "$LAST" ".input_shape == ([1, 3] + $window)"
run "quick-start encode" --preset quick-start --what encode --batch 1
check "quick-start encode" "$LAST" ".input_shape == ([1, 3] + $whole)"
for what in gen-step discr-step train-step; do
  run "gan $what" --config "$here/bench_tiny_gan.json" --what "$what" --random-perceptual
  check "gan $what" "$LAST" '.gan == true and .discriminator_params > 0'
  expected=$([[ $what == discr-step ]] && echo off || echo random)
  check "gan $what" "$LAST" ".perceptual == \"$expected\""
done

check "gan train-step" "$LAST" '.micro_batches == 1'
# --profile: per op, per op and shapes, and oneDNN's kernels on stderr; oneDNN's verbose lines,
# which it prints on standard output, never reach the JSON.
out=$("$trainer" bench --steps 1 --threads 1 --preset demo --what gen-step-recon --profile 2>/tmp/bench_json_err.$$) || {
  echo "FAIL profile: exit $?"; failed=1; }
[[ $(wc -l <<<"$out") -eq 1 ]] && jq -e . <<<"$out" >/dev/null || { echo "FAIL profile: stdout is not one JSON line"; echo "$out" | head -3; failed=1; }
for heading in "^op  " "^op and its tensor arguments" "^oneDNN primitives \\(" "^convolution [^ ]+ backward_weights"; do
  grep -Eq "$heading" /tmp/bench_json_err.$$ || { echo "FAIL profile: no line matching $heading on stderr"; failed=1; }
done
grep -q "verbose," /tmp/bench_json_err.$$ && { echo "FAIL profile: raw oneDNN verbose lines on stderr"; failed=1; }
# --precision auto runs as what the hardware computes.
run "demo auto" --preset demo --what encode --precision auto
expected=$(grep -qw -E 'amx_bf16|avx512_bf16' /proc/cpuinfo && echo bf16 || echo fp32)
check "demo auto" "$LAST" ".precision == \"$expected\""
# conv-check: every convolution of a generator step with GAN and LPIPS, bf16 against fp32.
out=$("$trainer" bench --threads 1 --config "$here/bench_tiny_gan.json" --what conv-check --random-perceptual 2>/tmp/bench_json_err.$$) || {
  echo "FAIL conv-check: exit $?"; failed=1; }
check "conv-check" "$out" '.what == "conv-check" and .precision == "bf16" and .ok == true and .failures == 0'
check "conv-check" "$out" '(.convolutions | length) >= 10 and ([.convolutions[] | .output, .grad_input, .grad_weight] | all(. > 0 and . < 0.02))'
check "conv-check" "$out" '[.convolutions[].convolution] | (unique | length) == length'
run "gan discr-step no r1" --config "$here/bench_tiny_gan.json" --what discr-step --no-r1
check "gan discr-step no r1" "$LAST" '.r1_steps == 0'
rm -f /tmp/bench_json_err.$$
[[ $failed -eq 0 ]] && echo "ok"
exit $failed
