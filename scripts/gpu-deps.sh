#!/usr/bin/env bash
# scripts/gpu-deps.sh [DIR]: copies the trainer's header-only and source dependencies from this
# Debian machine's packages into DIR (default: gpu-deps/, ignored by git), for machines that have
# a CUDA LibTorch (a PyTorch wheel) and CMake but none of these packages. Build there with
#   cmake -S . -B build-gpu -G Ninja -DTB_DEPS_DIR=gpu-deps -DTB_BUILD_GUI=OFF \
#         -DTB_WITH_FFMPEG=OFF -DTB_WITH_OPENCV=OFF \
#         -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
# (scripts/gpu-check.sh does exactly that). DIR holds: nlohmann-json and CLI11 (headers and CMake
# packages), spdlog and fmt headers (in log-include/), the Boost headers that <boost/crc.hpp> needs, and
# GoogleTest's source. With a trainer built here (build/bin/tokenbench-trainer, or TB_TRAINER) it
# also packs real footage (OpenCV's sample videos, package opencv-doc; or the videos in
# TB_SHARD_VIDEOS) into DIR/shards at bench-small's clip size, for the GPU test that trains on
# real footage without FFmpeg (gpu-check.sh finds it there). Everything stays under the 64 MiB a
# lent GPU machine takes along with the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-gpu-deps}

# opencv-doc and jq: the footage and the tool for the shards below.
packages=(nlohmann-json3-dev libcli11-dev libboost-dev libspdlog-dev libfmt-dev googletest g++ opencv-doc jq)
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
# spdlog and fmt: headers only (used header-only there, with the LibTorch's C++ ABI), in a folder
# of their own: only the log library sees them, since LibTorch 2.x ships another fmt.
mkdir -p "$dir/log-include"
cp -r /usr/include/spdlog /usr/include/fmt "$dir/log-include/"
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

trainer=${TB_TRAINER:-build/bin/tokenbench-trainer}
shards="not packed (no trainer at $trainer)"
if [ -x "$trainer" ]; then
  videos=${TB_SHARD_VIDEOS:-}
  if [ -z "$videos" ]; then
    samples=/usr/share/doc/opencv-doc/examples/data
    videos=$(mktemp -d)
    trap 'rm -rf "$videos"' EXIT
    cp $samples/vtest.avi $samples/Megamind.avi "$videos/"
    zcat /usr/share/doc/opencv-doc/opencv4/html/box.mp4.gz >"$videos/box.mp4"
  fi
  config=$(mktemp --suffix=.json)
  "$trainer" print-config --preset bench-small |
    jq --arg path "$videos" '.data.type = "videos" | .data.path = $path | .data.valid_fraction = 0' >"$config"
  "$trainer" pack --config "$config" --out "$dir/shards" --shard-mb 16 >"$dir/shards.json"
  rm -f "$config"
  shards="$(jq -r '"\(.clips) clips of bench-small (17 x 64 x 64) from \(.sources) videos"' "$dir/shards.json") in $dir/shards"
fi

cat >"$dir/README" <<END
Made by scripts/gpu-deps.sh on $(date -u +%Y-%m-%d) from Debian packages:
$(for p in "${packages[@]}"; do dpkg-query -W -f='  ${Package} ${Version}\n' "$p"; done)
Pass -DTB_DEPS_DIR=$dir to CMake.
Shards: $shards.
END
echo "gpu-deps: $(du -sh "$dir" | cut -f1) in $dir"
