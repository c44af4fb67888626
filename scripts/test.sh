#!/usr/bin/env bash
# The README's test command: installs what is missing, then builds and tests three
# configurations:
#   build/        the full GUI configuration (every test, slow and multi-process included)
#   build-nogui/  -DTB_BUILD_GUI=OFF, so the headless path cannot rot
#   build-fuzz/   clang + libFuzzer over the torch-free parsers, core tests under ASan/UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TB_JOBS:-2}
scripts/install-deps.sh

start=$(date +%s)
scripts/build.sh build
ctest --test-dir build --output-on-failure -j "$jobs"

# The headless build: tokenbench on QtCore only, the trainer and its CLI, the core tests (the
# trainer's unit tests are the same sources as in build/ and run there).
scripts/build.sh build-nogui -DTB_BUILD_GUI=OFF -DTB_BUILD_TRAINER_TESTS=OFF
ctest --test-dir build-nogui --output-on-failure -j "$jobs" -LE slow

scripts/build.sh build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DTB_BUILD_TRAINER=OFF -DTB_BUILD_GUI=OFF \
  -DTB_BUILD_FUZZERS=ON -DTB_SANITIZE=ON
ctest --test-dir build-fuzz --output-on-failure -j "$jobs"

echo "test.sh: all three configurations passed in $(( $(date +%s) - start )) s"
