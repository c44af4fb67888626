#!/usr/bin/env bash
# scripts/gpu-check.sh OUT_DIR: the GPU half of the checks, in one go, on a machine with a CUDA
# LibTorch (a PyTorch 2.x wheel), CMake and ninja, and no Qt, FFmpeg or OpenCV:
#   1. configure and build the trainer and its CUDA tests against that LibTorch, with the
#      dependencies scripts/gpu-deps.sh copied into gpu-deps/ (run it on a Debian machine first);
#   2. run the tests labelled `cuda` (tests/cuda), with TB_TEST_SHARDS=gpu-deps/shards when
#      gpu-deps.sh packed real footage there;
#   3. the bench rows in bf16: bench-small train-step, and the README configuration's gen-step at
#      the largest batch of BATCHES that fits;
# and writes OUT_DIR/gpu-check.json (one summary), OUT_DIR/ctest.log, OUT_DIR/bench-*.json and
# OUT_DIR/build.log. TORCH_PREFIX overrides where LibTorch's CMake package is (default: the
# python3 torch module's). Meant to finish within 9 minutes on 16 cores.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${TB_GPU_BUILD:-build-gpu}
jobs=${TB_JOBS:-$(nproc)}
batches=${BATCHES:-"16 8 4 2 1"}
start=$(date +%s)
stage() { echo "== $(($(date +%s) - start)) s: $*" | tee -a "$out/stages.log"; }

prefix=${TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)}
summary() {  # summary STATUS: the JSON summary from what the stages left
  python3 - "$out" "$1" "$prefix" "$(($(date +%s) - start))" <<'PY'
import json, os, re, sys
out, status, prefix, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
s = {"status": status, "seconds": seconds, "torch_prefix": prefix, "tests": {}, "bench": {}}
log = os.path.join(out, "ctest.log")
if os.path.exists(log):
    for line in open(log):
        m = re.search(r"Test\s+#\d+:\s+(\S+)\s+\.+\**\s*(Passed|\*\*\*Failed|\*\*\*Skipped|Not Run|Skipped)", line)
        if m:
            s["tests"][m.group(1)] = m.group(2).strip("*").lower()
for name in sorted(os.listdir(out)):
    if name.startswith("bench-") and name.endswith(".json"):
        try:
            s["bench"][name[6:-5]] = json.load(open(os.path.join(out, name)))
        except ValueError as e:
            s["bench"][name[6:-5]] = {"error": str(e)}
json.dump(s, open(os.path.join(out, "gpu-check.json"), "w"), indent=1)
print(json.dumps(s, indent=1))
PY
}

if [ -z "$prefix" ]; then
  echo "gpu-check: no LibTorch (python3 -c 'import torch' failed; set TORCH_PREFIX)" | tee "$out/stages.log"
  summary no_torch
  exit 1
fi
if [ ! -d gpu-deps ]; then
  echo "gpu-check: gpu-deps/ is missing: run scripts/gpu-deps.sh on a Debian machine and carry it" |
    tee "$out/stages.log"
  summary no_deps
  exit 1
fi

stage "configure $build against $prefix"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DTB_DEPS_DIR="$PWD/gpu-deps" -DTB_BUILD_GUI=OFF -DTB_WITH_FFMPEG=OFF -DTB_WITH_OPENCV=OFF \
  >"$out/build.log" 2>&1; then
  summary configure_failed
  exit 1
fi
stage "build tokenbench-trainer and the cuda tests (-j$jobs)"
if ! cmake --build "$build" -j "$jobs" --target tokenbench-trainer tb_cuda_tests >>"$out/build.log" 2>&1; then
  tail -50 "$out/build.log"
  summary build_failed
  exit 1
fi

stage "tests labelled cuda"
shards=${TB_TEST_SHARDS:-}
[ -z "$shards" ] && [ -f gpu-deps/shards/manifest.json ] && shards=$PWD/gpu-deps/shards
TB_TEST_SHARDS=$shards ctest --test-dir "$build" -L cuda --output-on-failure --timeout 240 >"$out/ctest.log" 2>&1
tests_rc=$?

trainer=$build/bin/tokenbench-trainer
bench() {  # bench NAME ARGS...: one row, its JSON in bench-NAME.json
  local name=$1
  shift
  stage "bench $name: $*"
  timeout 150 "$trainer" bench --device cuda --precision bf16 --random-perceptual "$@" \
    >"$out/bench-$name.json" 2>"$out/bench-$name.err"
}
bench bench-small-train-step --preset bench-small --what train-step --batch 8 --steps 5 --warmup 2
for b in $batches; do
  if bench readme-gen-step --preset magvit2-readme --what gen-step --batch "$b" --steps 3 --warmup 2; then
    break
  fi
done

stage "done"
status=passed
[ $tests_rc -eq 0 ] || status=tests_failed
summary "$status"
[ "$status" = passed ]
