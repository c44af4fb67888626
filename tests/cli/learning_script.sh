#!/usr/bin/env bash
# bench/learning.sh end to end on small made-up videos: the clips are cut (training sources whole,
# held-out sources in 5-frame clips), a tiny model trains for a few seconds, and the table has a
# row per frame position, per held-out source and "all", with the untrained, classic VQ reference
# and trained figures. Also: a video on
# both lists is refused. Usage: learning_script.sh TRAINER_BUILD_DIR WORKDIR. Exit 77 (skip)
# without the ffmpeg and jq programs.
set -uo pipefail
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../../bench/learning.sh
for tool in ffmpeg jq; do
  command -v $tool >/dev/null || { echo "SKIP: needs $tool (apt-get install $tool)"; exit 77; }
done
rm -rf "$work"; mkdir -p "$work/src"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

# Four sources: three patterns to train on, one to hold out (11 frames: two 5-frame clips).
for p in testsrc2 smptebars rgbtestsrc; do
  ffmpeg -nostdin -loglevel error -f lavfi -i "$p=size=48x36:rate=10:duration=2" -c:v libx264 -pix_fmt yuv420p \
    "$work/src/$p.mp4"
done
ffmpeg -nostdin -loglevel error -f lavfi -i "mandelbrot=size=40x40:rate=10" -frames:v 11 -c:v ffv1 "$work/src/held.mkv"

tiny=(--preset demo --size 32 --frames 5 --budget 4s --set model.init_dim=8 --set model.max_dim=16
      --set train.threads=1 --set train.valid_every=5 --set train.valid_clips=2)
"$script" --build "$build" "${tiny[@]}" --work "$work/w" --train "$work"/src/{testsrc2,smptebars,rgbtestsrc}.mp4 \
  --held-out "$work/src/held.mkv" >"$work/out.txt" 2>"$work/err.txt"
code=$?
cat "$work/out.txt"
check "learning.sh exits 0" "[ $code -eq 0 ]"
check "three training videos, two held-out clips" "grep -q '3 training videos, 2 held-out clips of 5 frames at 32x32' '$work/out.txt'"
check "held-out clips are 5-frame files" "[ \$(ls '$work/w/held-out' | wc -l) -eq 2 ]"
check "every training video is trained on (none skipped: their timestamps number their frames)" \
  "! grep -q 'skipping' '$work/w/train.log'"
check "training used data.valid_path" "jq -e '.data.valid_path == \"$work/w/held-out\"' '$work/w/run/config.json' >/dev/null"
check "a row per frame position, one per held-out source and one for all, three tokenizers each" \
  "[ \$(grep -cE '^[0-4] +([0-9.]+ +[0-9.-]+ *){3}$' '$work/out.txt') -eq 5 ] && grep -qE '^held +([0-9.]+ +[0-9.-]+ *){3}$' '$work/out.txt' && grep -qE '^all +([0-9.]+ +[0-9.-]+ *){3}$' '$work/out.txt'"
check "the classic VQ reference is named" "grep -q '^reference: classic VQ, 8 bits/token' '$work/out.txt'"
check "the steps done are named" "grep -qE ': [0-9]+ steps in [0-9]+ s \\(budget 4s\\)' '$work/out.txt'"
check "validation wrote held-out PSNR" "grep -q 'valid/psnr' '$work/w/run/metrics.jsonl'"

"$script" --build "$build" "${tiny[@]}" --work "$work/dup" --train "$work/src/testsrc2.mp4" \
  --held-out "$work/src/smptebars.mp4" "$work/src/testsrc2.mp4" >/dev/null 2>"$work/dup.err"
code=$?
check "a video on both lists is refused" "[ $code -eq 2 ] && grep -q 'testsrc2.mp4 is also a training video' '$work/dup.err'"

if [ $fail -ne 0 ]; then
  tail -20 "$work/err.txt"
  exit 1
fi
rm -rf "$work"
echo "learning.sh checks passed"
