#!/usr/bin/env bash
# Loader throughput from clip shards against the same clips decoded from videos: 8 H.264 files
# (320x240, 200 frames each, ffmpeg's testsrc2) packed once with `tokenbench-trainer pack`, then
# the training loader (magvit2-small clips: 9 frames, 64x64, batch 2) over the videos and over
# the shards, the two sides alternating for ROUNDS rounds in this one run; clips/s per round,
# the median of each side and their ratio. Also pack's own clips/s.
# Usage: bench/run_shard_bench.sh [BUILD_DIR] [THREADS] [ROUNDS]. Needs the ffmpeg and jq
# programs (Debian packages ffmpeg, jq); Tokenbench itself needs neither.
set -euo pipefail
build=${1:-build}
threads=${2:-2}
rounds=${3:-3}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for program in ffmpeg jq; do
  command -v $program >/dev/null || { echo "run_shard_bench: needs $program (apt-get install $program)" >&2; exit 2; }
done
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $threads loader threads"

mkdir -p "$work/videos"
for i in $(seq 1 8); do
  ffmpeg -loglevel error -f lavfi -i "testsrc2=size=320x240:rate=25:duration=8" \
    -vf "hue=h=$((i * 40))" -c:v libx264 -preset veryfast -g 50 -pix_fmt yuv420p "$work/videos/v$i.mp4"
done
"$bin/tokenbench-trainer" print-config --preset magvit2-small |
  jq --arg path "$work/videos" '.data.type = "videos" | .data.path = $path' >"$work/videos.json"
"$bin/tokenbench-trainer" pack --config "$work/videos.json" --out "$work/shards" --threads "$threads" \
  2>/dev/null | tee "$work/pack.json"
echo "pack: $(jq -r '"\(.clips) clips, \(.bytes) bytes, \(.clips_per_s | floor) clips/s"' "$work/pack.json")"

loader() {  # loader DATA_TYPE DIR: one JSON line
  "$bin/tokenbench-bench" --what loader --preset magvit2-small --data-type "$1" --data "$2" \
    --threads "$threads" --batch 2 --warmup 4 --repeats 200
}
: >"$work/rounds.txt"
for round in $(seq 1 "$rounds"); do
  v=$(loader videos "$work/videos" | jq '.clips_per_s')
  s=$(loader shards "$work/shards" | jq '.clips_per_s')
  printf 'round %d: videos %.0f clips/s, shards %.0f clips/s\n' "$round" "$v" "$s"
  echo "$v $s" >>"$work/rounds.txt"
done
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mv=$(cut -d' ' -f1 "$work/rounds.txt" | median)
ms=$(cut -d' ' -f2 "$work/rounds.txt" | median)
printf 'median: videos %.0f clips/s, shards %.0f clips/s (%.1fx)\n' "$mv" "$ms" "$(echo "$ms / $mv" | bc -l)"
