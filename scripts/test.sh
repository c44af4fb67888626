#!/usr/bin/env bash
# The README's test command: installs what is missing, then builds and tests three
# configurations:
#   build/        the full GUI configuration (every test, slow and multi-process included)
#   build-nogui/  -DTB_BUILD_GUI=OFF, so the headless path cannot rot
#   build-fuzz/   clang + libFuzzer over the torch-free parsers, core tests under ASan/UBSan
#
# scripts/test.sh --fast: the edit-build-test loop: builds build/ and runs its tests without the
# `slow` label (no multi-process, fuzz, package or real-training runs), nothing else.
#
# Test labels (ctest -L NAME; tests/CMakeLists.txt lists them too):
#   core         torch-free contract: configuration, events, run directory, safetensors
#   trainer      the trainer's gtest suite (models, data, training, metrics, ...)
#   cli          the command-line tools, driven as a user would (tests/cli/*.sh)
#   gui          the window and its widgets, offscreen or under Xvfb (QtTest)
#   distributed  real multi-process c10d runs
#   cuda         needs a CUDA device; skips without one (scripts/gpu-check.sh runs them)
#   fuzz         libFuzzer targets over the parsers (build-fuzz/)
#   package      install layout and the Debian package
#   bench        GUI figures that print, never assert a time
#   lint         the tree is clang-formatted (tests/lint/clang_format.sh; pending files listed)
#   slow         anything that takes more than a few seconds or several processes
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TB_JOBS:-2}
scripts/install-deps.sh

start=$(date +%s)
scripts/build.sh build
if [[ ${1:-} == --fast ]]; then
  ctest --test-dir build --output-on-failure -j "$jobs" -LE slow
  echo "test.sh --fast: build/ without the slow label passed in $(( $(date +%s) - start )) s"
  exit 0
fi
ctest --test-dir build --output-on-failure -j "$jobs"

# The headless build: tokenbench on QtCore only, the trainer and its CLI, the core tests (the
# trainer's unit tests are the same sources as in build/ and run there).
scripts/build.sh build-nogui -DTB_BUILD_GUI=OFF -DTB_BUILD_TRAINER_TESTS=OFF
ctest --test-dir build-nogui --output-on-failure -j "$jobs" -LE slow

scripts/build.sh build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DTB_BUILD_TRAINER=OFF -DTB_BUILD_GUI=OFF \
  -DTB_BUILD_FUZZERS=ON -DTB_SANITIZE=ON
ctest --test-dir build-fuzz --output-on-failure -j "$jobs"

echo "test.sh: all three configurations passed in $(( $(date +%s) - start )) s"
