#!/usr/bin/env bash
# scripts/gpu-check.sh OUT_DIR: the GPU half of the checks, in one go, on a machine with a CUDA
# LibTorch (a PyTorch 2.x wheel), CMake and ninja, and no Qt, FFmpeg or OpenCV (the lent GPU
# machines: one H100 or H200, 16 cores, 15 minutes in all). Stages, each bounded in time:
#   1. configure build-gpu/ against that LibTorch with the dependencies scripts/gpu-deps.sh copied
#      into gpu-deps/ (run it on a Debian machine first and carry gpu-deps/ along), and build only
#      tokenbench-trainer and the CUDA tests (-j16); a build-gpu/ left by an earlier call is reused;
#   2. `tokenbench-trainer --version` (LibTorch, CUDA runtime, cuDNN, GPUs);
#   3. conv-check: every convolution of the README configuration (and bench-small), forward and
#      backward in bf16 against fp32 on the GPU (cuDNN 9.10 returned wrong bf16 Conv3d results
#      for large shapes: pytorch issue 163539), with the loaded cuDNN's version;
#   4. the tests labelled `cuda` (tests/cuda), with TB_TEST_SHARDS=gpu-deps/shards when
#      gpu-deps.sh packed real footage there;
#   5. bench rows in bf16 (MFU, clips/s, peak GPU memory): bench-small train-step, and the README
#      configuration's gen-step at the largest batch of BATCHES that fits.
# OUT_DIR/gpu-check.json sums it up, written whatever stage fails or runs out of time (and on
# SIGTERM); beside it stages.log, build.log, version.txt, ctest.log, conv-*.json, bench-*.json
# and their .err. TORCH_PREFIX overrides where LibTorch's CMake package is (default: the python3
# torch module's); TB_GPU_BUDGET_S bounds the whole (default 540 s), TB_JOBS the build (16).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${TB_GPU_BUILD:-build-gpu}
jobs=${TB_JOBS:-16}
budget=${TB_GPU_BUDGET_S:-540}
batches=${BATCHES:-"16 8 4 2 1"}
start=$(date +%s)
status=started
: >"$out/stages.log"
stage() { echo "== $(($(date +%s) - start)) s: $*" | tee -a "$out/stages.log"; }
left() { echo $((budget - ($(date +%s) - start))); }
# bounded SECONDS CMD...: CMD with at most SECONDS, and never past the budget.
bounded() {
  local limit=$1
  shift
  local remaining
  remaining=$(left)
  [ "$remaining" -lt "$limit" ] && limit=$remaining
  if [ "$limit" -le 5 ]; then
    echo "gpu-check: out of time before: $*" >>"$out/stages.log"
    return 124
  fi
  timeout --kill-after=10 "$limit" "$@"
}

prefix=${TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)}
summary() {  # the JSON summary from what the stages left
  python3 - "$out" "$status" "$prefix" "$(($(date +%s) - start))" <<'PY'
import json, os, re, sys
out, status, prefix, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
s = {"status": status, "seconds": seconds, "torch_prefix": prefix, "stages": [],
     "version": None, "gpu": None, "tests": {}, "conv_check": {}, "bench": {}}
def text(name):
    p = os.path.join(out, name)
    return open(p, errors="replace").read() if os.path.exists(p) else ""
s["stages"] = [l[3:] for l in text("stages.log").splitlines() if l.startswith("== ")]
s["version"] = text("version.txt").strip() or None
s["gpu"] = (text("nvidia-smi.txt").strip().splitlines() or [None])[0]
for line in text("ctest.log").splitlines():
    m = re.search(r"Test\s+#\d+:\s+(\S+)\s+\.+\**\s*(Passed|\*\*\*Failed|\*\*\*Skipped|Not Run|Skipped|\*\*\*Timeout)", line)
    if m:
        s["tests"][m.group(1)] = m.group(2).strip("*").lower()
for name in sorted(os.listdir(out)):
    for prefix_, key in (("bench-", "bench"), ("conv-", "conv_check")):
        if name.startswith(prefix_) and name.endswith(".json"):
            row = name[len(prefix_):-5]
            try:
                j = json.loads(text(name))
            except ValueError:
                j = {"error": (text(name[:-5] + ".err").strip().splitlines() or ["no output"])[-1]}
            if key == "conv_check" and "convolutions" in j:
                j = {k: j[k] for k in ("device_name", "torch", "cudnn", "precision", "batch",
                                       "tolerance", "worst", "failures", "ok") if k in j} | {
                     "checked": len(j["convolutions"]),
                     "outside_tolerance": [c for c in j["convolutions"] if not c["ok"]]}
            if key == "bench" and "median_s" in j:
                j = {k: j[k] for k in ("device_name", "precision", "batch", "input_shape", "median_s",
                                       "clips_per_s", "mfu", "bf16_gemm_peak_tflops",
                                       "peak_device_memory_mb", "flops_per_step") if k in j}
            s[key][row] = j
json.dump(s, open(os.path.join(out, "gpu-check.json"), "w"), indent=1)
print(json.dumps(s, indent=1))
PY
}
trap 'summary' EXIT
trap 'status=killed; exit 143' TERM INT

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$out/nvidia-smi.txt" 2>&1 || true
if [ -z "$prefix" ]; then
  echo "gpu-check: no LibTorch (python3 -c 'import torch' failed; set TORCH_PREFIX)" | tee -a "$out/stages.log"
  status=no_torch
  exit 1
fi
if [ ! -d gpu-deps ]; then
  echo "gpu-check: gpu-deps/ is missing: run scripts/gpu-deps.sh on a Debian machine and carry it" |
    tee -a "$out/stages.log"
  status=no_deps
  exit 1
fi

stage "configure $build against $prefix"
if ! bounded 120 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DTB_DEPS_DIR="$PWD/gpu-deps" -DTB_BUILD_GUI=OFF -DTB_WITH_FFMPEG=OFF -DTB_WITH_OPENCV=OFF \
  >"$out/build.log" 2>&1; then
  tail -30 "$out/build.log"
  status=configure_failed
  exit 1
fi
stage "build tokenbench-trainer and the cuda tests (-j$jobs)"
if ! bounded 420 cmake --build "$build" -j "$jobs" --target tokenbench-trainer tb_cuda_tests >>"$out/build.log" 2>&1; then
  grep -E 'error|FAILED' "$out/build.log" | head -30
  status=build_failed
  exit 1
fi
trainer=$build/bin/tokenbench-trainer
"$trainer" --version >"$out/version.txt" 2>&1
cat "$out/version.txt"

status=checking
failed=()
conv_check() {  # conv_check NAME ARGS...: conv-NAME.json
  local name=$1
  shift
  stage "conv-check $name: $*"
  bounded 150 "$trainer" bench --what conv-check --device cuda --precision bf16 --random-perceptual "$@" \
    >"$out/conv-$name.json" 2>"$out/conv-$name.err" || failed+=("conv-$name")
}
conv_check readme --preset magvit2-readme
conv_check bench-small --preset bench-small

stage "tests labelled cuda"
shards=${TB_TEST_SHARDS:-}
[ -z "$shards" ] && [ -f gpu-deps/shards/manifest.json ] && shards=$PWD/gpu-deps/shards
TB_TEST_SHARDS=$shards bounded 300 ctest --test-dir "$build" -L cuda --output-on-failure --timeout 240 \
  >"$out/ctest.log" 2>&1 || failed+=(tests)

bench() {  # bench NAME ARGS...: one row, its JSON in bench-NAME.json
  local name=$1
  shift
  stage "bench $name: $*"
  bounded 150 "$trainer" bench --device cuda --precision bf16 --random-perceptual "$@" \
    >"$out/bench-$name.json" 2>"$out/bench-$name.err"
}
bench bench-small-train-step --preset bench-small --what train-step --batch 8 --steps 5 --warmup 2 ||
  failed+=(bench-small-train-step)
fits=0
for b in $batches; do
  if bench readme-gen-step --preset magvit2-readme --what gen-step --batch "$b" --steps 3 --warmup 2; then
    fits=1
    break
  fi
  [ "$(left)" -le 5 ] && break
done
[ $fits -eq 1 ] || failed+=(readme-gen-step)

stage "done"
if [ ${#failed[@]} -eq 0 ]; then
  status=passed
else
  status="failed: ${failed[*]}"
fi
[ "$status" = passed ]
