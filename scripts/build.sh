#!/usr/bin/env bash
# scripts/build.sh DIR [CMAKE_ARGS...]: configure (once) and build one configuration with Ninja.
# Warnings are errors in every configuration, so that the README's two commands configure
# build/ identically and the second reuses what the first built. TB_TARGETS="a b" builds only
# those targets.
set -euo pipefail
dir=$1; shift
jobs=${TB_JOBS:-2}
cmake -S "$(dirname "$0")/.." -B "$dir" -G Ninja -DTB_WERROR=ON "$@"
targets=()
for t in ${TB_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$dir" -j "$jobs" "${targets[@]}"
