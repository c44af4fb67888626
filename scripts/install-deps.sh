#!/usr/bin/env bash
# Installs the Debian 12 packages Tokenbench needs, only those missing (idempotent).
# Nothing else is downloaded: every dependency is a Debian package.
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config clang clang-format libclang-rt-14-dev
  # libraries
  libtorch-dev libopenblas0-openmp
  qt6-base-dev qt6-qpa-plugins libqcustomplot-dev
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  nlohmann-json3-dev libcli11-dev libgtest-dev libboost-dev libspdlog-dev libgloo-dev
  # the window needs a font offscreen; GUI tests also run under Xvfb
  fonts-dejavu-core xvfb xauth
  # packaging tests: dpkg-shlibdeps fills the .deb's Depends (cpack), desktop-file-validate and
  # appstreamcli check the desktop entry and the AppStream metainfo
  dpkg-dev desktop-file-utils appstream
  # bench/ scripts make and cut videos and read JSON (Tokenbench itself needs neither program)
  ffmpeg jq
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
