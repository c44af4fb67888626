#!/usr/bin/env bash
# Data figures: training steps/s and data-wait fraction of magvit2-small at batch 2 on procedural
# clips and on a folder of real video files, and the loader's decoded frames/s against
# `ffmpeg -benchmark` decoding the same files on the same number of threads.
# Usage: bench/run_data_bench.sh [BUILD_DIR] [THREADS]. Needs the ffmpeg program (Debian package
# ffmpeg) to make the videos; it is not needed by Tokenbench itself.
set -euo pipefail
build=${1:-build}
threads=${2:-2}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v ffmpeg >/dev/null || { echo "run_data_bench: needs ffmpeg (apt-get install ffmpeg)" >&2; exit 2; }

# 8 real H.264 files, 320x240, 25 fps, 8 s each (200 frames), 2 s keyframe interval.
mkdir -p "$work/videos"
for i in $(seq 1 8); do
  ffmpeg -loglevel error -f lavfi -i "testsrc2=size=320x240:rate=25:duration=8" \
    -vf "hue=h=$((i * 40))" -c:v libx264 -preset veryfast -g 50 -pix_fmt yuv420p "$work/videos/v$i.mp4"
done

# Loader: magvit2-small clips (9 frames, 64x64) in batches of 2, $threads loader threads.
"$bin/tokenbench-bench" --what loader --preset magvit2-small --data "$work/videos" --threads "$threads" \
  --batch 2 --warmup 4 --repeats 40 | tee "$work/loader.json"

# ffmpeg: every frame of every file decoded (not resized), $threads files at a time, one thread each.
start=$(date +%s.%N)
ls "$work"/videos/*.mp4 | xargs -P "$threads" -I{} ffmpeg -loglevel error -benchmark -threads 1 -i {} -f null - \
  2>/dev/null
end=$(date +%s.%N)
echo "{\"what\":\"ffmpeg-decode\",\"frames\":1600,\"frames_per_s\":$(echo "1600 / ($end - $start)" | bc -l)}"

# Training steps/s and data wait, procedural vs real videos.
for data in synthetic videos; do
  run="$work/run_$data"
  set_data=(--set data.type=$data)
  [ "$data" = videos ] && set_data+=(--set "data.path=$work/videos")
  "$bin/tokenbench-trainer" train --preset magvit2-small --run-dir "$run" "${set_data[@]}" \
    --set train.batch_size=2 --set train.max_steps=12 --set train.log_every=6 --set train.valid_every=0 \
    --set train.checkpoint_every=0 --set train.threads="$threads" --set data.workers="$threads" \
    >/dev/null 2>"$work/train_$data.err"
  tail -1 "$run/metrics.jsonl" | sed "s/^{/{\"what\":\"train-$data\",/"
done
