#!/usr/bin/env bash
# scripts/gpu-deps.sh [DIR]: copies the trainer's header-only and source dependencies from this
# Debian machine's packages into DIR (default: gpu-deps/, ignored by git), for machines that have
# a CUDA LibTorch (a PyTorch wheel) and CMake but none of these packages. Build there with
#   cmake -S . -B build-gpu -G Ninja -DTB_DEPS_DIR=gpu-deps -DTB_BUILD_GUI=OFF \
#         -DTB_WITH_FFMPEG=OFF -DTB_WITH_OPENCV=OFF \
#         -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
# (scripts/gpu-check.sh does exactly that). DIR holds: nlohmann-json and CLI11 (headers and CMake
# packages), spdlog and fmt headers, the Boost headers that <boost/crc.hpp> needs, and
# GoogleTest's source.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-gpu-deps}

packages=(nlohmann-json3-dev libcli11-dev libboost-dev libspdlog-dev libfmt-dev googletest g++)
missing=()
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

rm -rf "$dir"
mkdir -p "$dir/include" "$dir/share/cmake"
cp -r /usr/include/nlohmann "$dir/include/"
cp -r /usr/share/cmake/nlohmann_json "$dir/share/cmake/"
cp -r /usr/include/CLI "$dir/include/"
cp -r /usr/share/cmake/CLI11 "$dir/share/cmake/"
# spdlog and fmt: headers only (used header-only there, with the LibTorch's C++ ABI).
cp -r /usr/include/spdlog /usr/include/fmt "$dir/include/"
cp -r /usr/src/googletest "$dir/googletest"
# Boost: every header <boost/crc.hpp> includes on this compiler, boost/version.hpp (which CMake's
# FindBoost reads) and all of boost/config (its compiler and library choices differ per machine).
headers=$(printf '#include <boost/crc.hpp>\n#include <boost/version.hpp>\n' |
  g++ -std=c++17 -M -x c++ - | tr ' \\' '\n\n' | grep '^/usr/include/boost/' | sort -u)
for f in $headers; do
  rel=${f#/usr/include/}
  mkdir -p "$dir/include/$(dirname "$rel")"
  cp "$f" "$dir/include/$rel"
done
cp -r /usr/include/boost/config "$dir/include/boost/"
cat >"$dir/README" <<END
Made by scripts/gpu-deps.sh on $(date -u +%Y-%m-%d) from Debian packages:
$(for p in "${packages[@]}"; do dpkg-query -W -f='  ${Package} ${Version}\n' "$p"; done)
Pass -DTB_DEPS_DIR=$dir to CMake.
END
echo "gpu-deps: $(du -sh "$dir" | cut -f1) in $dir"
