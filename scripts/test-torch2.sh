#!/usr/bin/env bash
# scripts/test-torch2.sh [VERSION]: the trainer, its tests and the bench built against LibTorch 2.x
# (the CUDA build of a PyTorch wheel that scripts/torch2-deps.sh unpacked, default 2.11.0) into
# build-torch2/, configured as on a GPU machine (GUI off, TB_WITH_CUDA=ON) but with FFmpeg and
# OpenCV, warnings as errors; then every test there. Without a GPU the tests labelled `cuda`
# skip ("no CUDA device is visible") and everything else runs on the CPU.
#
# The checkpoint portability test resumes checkpoints across the two LibTorch versions: it uses
# build/'s trainer (Debian's LibTorch 1.13, as the README's commands build it), built here first
# if missing.
#
#   scripts/torch2-deps.sh && scripts/test-torch2.sh
#
# TB_JOBS sets the build's parallel jobs (default 2); extra arguments after VERSION go to ctest
# (e.g. -R Portability).
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-2.11.0}
shift || true
export TB_JOBS=${TB_JOBS:-2}
start=$(date +%s)
scripts/install-deps.sh
prefix=$(scripts/torch2-deps.sh "$version" | tail -1)

TB_TARGETS=tokenbench-trainer scripts/build.sh build
scripts/build.sh build-torch2 -DTB_BUILD_GUI=OFF -DTB_WITH_CUDA=ON -DCMAKE_PREFIX_PATH="$prefix" \
  -DTB_PEER_TRAINER="$PWD/build/bin/tokenbench-trainer"
build-torch2/bin/tokenbench-trainer --version
ctest --test-dir build-torch2 --output-on-failure -j "$TB_JOBS" "$@"
echo "test-torch2.sh: LibTorch $(sed -n 's/^torch \([^ ]*\).*/\1/p' "$(dirname "$prefix")/../../.complete") build passed in $(($(date +%s) - start)) s"
