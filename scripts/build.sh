#!/usr/bin/env bash
# scripts/build.sh DIR [CMAKE_ARGS...]: configure (once) and build one configuration with Ninja.
set -euo pipefail
dir=$1; shift
jobs=${TB_JOBS:-2}
cmake -S "$(dirname "$0")/.." -B "$dir" -G Ninja "$@"
cmake --build "$dir" -j "$jobs"
