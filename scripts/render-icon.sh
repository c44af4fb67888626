#!/usr/bin/env bash
# Renders the 256 px application icon from the hand-drawn SVG. The PNG is committed, so building
# never needs this; run it after editing resources/icons/tokenbench.svg. Needs rsvg-convert
# (Debian package librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")/.."
rsvg-convert --width 256 --height 256 --output resources/icons/tokenbench-256.png \
  resources/icons/tokenbench.svg
echo "wrote resources/icons/tokenbench-256.png"
