#!/usr/bin/env bash
# How fast a configuration learns, on real footage it has never seen: cuts clips from the video
# files given (centre square crop, resized, lossless FFV1), trains on the --train sources for a
# wall-clock budget (validating on the held-out clips: the window's held-out PSNR curve), then
# prints PSNR and SSIM by frame position, by source and overall on every clip of the --held-out
# sources (other videos, never trained on), for the untrained tokenizer, the classic VQ reference
# at the same token grid and bits (tokenbench-trainer baseline), and the trained tokenizer.
#
# Usage: bench/learning.sh [--build DIR] [--preset NAME] [--budget 20m] [--set KEY=VALUE ...]
#                          [--size 64] [--frames 17] [--weights ema|raw] [--work DIR]
#                          --train VIDEO... --held-out VIDEO...
# Needs the programs ffmpeg and jq (Debian packages ffmpeg, jq); Tokenbench itself needs neither.
set -euo pipefail

build=build
preset=quick-start
budget=20m
size=64
frames=17
weights=ema
work=
sets=()
train=()
held=()
list=
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --preset) preset=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    --size) size=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --weights) weights=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --train) list=train; shift ;;
    --held-out) list=held; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "learning.sh: unknown option $1" >&2; exit 2 ;;
    *)
      [ -f "$1" ] || { echo "learning.sh: $1: no such file" >&2; exit 2; }
      case $list in
        train) train+=("$1") ;;
        held) held+=("$1") ;;
        *) echo "learning.sh: $1: say --train or --held-out before the files" >&2; exit 2 ;;
      esac
      shift ;;
  esac
done
[ ${#train[@]} -gt 0 ] && [ ${#held[@]} -gt 0 ] || { echo "learning.sh: give --train and --held-out videos" >&2; exit 2; }
case $weights in ema|raw) ;; *) echo "learning.sh: --weights is ema or raw" >&2; exit 2 ;; esac
for tool in ffmpeg jq; do
  command -v $tool >/dev/null || { echo "learning.sh: needs $tool (apt-get install $tool)" >&2; exit 2; }
done
trainer=$build/bin/tokenbench-trainer
[ -x "$trainer" ] || { echo "learning.sh: $trainer not built" >&2; exit 2; }

# Held-out means other videos: no file may be on both lists, not even under another name.
declare -A seen
for f in "${train[@]}"; do seen[$(sha256sum <"$f" | cut -c1-64)]=$f; done
for f in "${held[@]}"; do
  sum=$(sha256sum <"$f" | cut -c1-64)
  [ -z "${seen[$sum]:-}" ] || { echo "learning.sh: $f is also a training video (${seen[$sum]})" >&2; exit 2; }
done

[ -n "$work" ] || work=$(mktemp -d /tmp/tokenbench-learning.XXXXXX)
mkdir -p "$work/train" "$work/held-out" "$work/full"
# Timestamps renumbered at the nominal rate: some sources have gaps that would make a clip's
# container claim many more frames than it holds. Rounded: N/FRAME_RATE/TB alone truncates
# 3/10/0.1 = 2.99999 to 2, and gives two frames one timestamp.
square="crop='min(iw,ih)':'min(iw,ih)',scale=$size:$size:flags=area,setpts=round(N/FRAME_RATE/TB)"

# One lossless size x size video per source, named after it (a duplicate name gets a number).
convert() {  # FILE DIR -> prints the written path
  local name out n=1
  name=$(basename "${1%.*}")
  out=$2/$name.mkv
  while [ -e "$out" ]; do n=$((n + 1)); out=$2/$name-$n.mkv; done
  ffmpeg -nostdin -loglevel error -i "$1" -an -vf "$square" -fps_mode passthrough \
    -c:v ffv1 -pix_fmt bgr0 "$out"
  echo "$out"
}
count_frames() {
  ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1"
}

# Training: whole sources (the loader draws clips at random starts, flipped at random).
for f in "${train[@]}"; do convert "$f" "$work/train" >/dev/null; done
# Held-out: consecutive clips of `frames` frames from each source, one file per clip.
for f in "${held[@]}"; do
  full=$(convert "$f" "$work/full")
  n=$(count_frames "$full")
  base=$(basename "${full%.mkv}")
  for ((k = 0; (k + 1) * frames <= n; k++)); do
    ffmpeg -nostdin -loglevel error -i "$full" -vf "trim=start_frame=$((k * frames)):end_frame=$(((k + 1) * frames)),setpts=round(N/FRAME_RATE/TB)" \
      -fps_mode passthrough -c:v ffv1 -pix_fmt bgr0 "$work/held-out/$(printf '%s_%03d.mkv' "$base" "$k")"
  done
done
n_train=$(ls "$work/train" | wc -l)
n_held=$(ls "$work/held-out" | wc -l)
[ "$n_held" -gt 0 ] || { echo "learning.sh: no held-out video has $frames frames" >&2; exit 2; }
echo "learning.sh: $n_train training videos, $n_held held-out clips of $frames frames at ${size}x$size in $work"

# Train for the budget. Validation during training reads the held-out clips (data.valid_path),
# so the window's held-out PSNR curve is this same measurement over wall-clock time.
rm -rf "$work/run"
start=$(date +%s)
"$trainer" train --preset "$preset" --set data.type=videos --set "data.path=$work/train" \
  --set "data.valid_path=$work/held-out" --set data.image_size=$size --set data.num_frames=$frames \
  "${sets[@]}" --time-budget "$budget" --run-dir "$work/run" >"$work/train.events" 2>"$work/train.log" || {
  echo "learning.sh: training failed (log: $work/train.log):" >&2; tail -5 "$work/train.log" >&2; exit 1; }
seconds=$(($(date +%s) - start))
steps=$(tail -1 "$work/train.events" | jq -r '.step')

# The same tokenizer untrained (the run's own initialisation), then trained, beside the classic
# VQ reference at its token grid and bits (the run's own when train.reference_codec fitted it,
# else fitted now on the same training videos).
rm -rf "$work/untrained" "$work/review"
"$trainer" init --config "$work/run/config.json" --out "$work/untrained" >/dev/null
reference=$work/run/reference
if [ ! -f "$reference/codec.safetensors" ]; then
  reference=$work/reference
  rm -rf "$reference"
  "$trainer" baseline --config "$work/run/config.json" --out "$reference" >/dev/null 2>"$work/baseline.log" || {
    echo "learning.sh: baseline failed (log: $work/baseline.log):" >&2; tail -5 "$work/baseline.log" >&2; exit 1; }
fi
label=$(jq -r '.name' "$reference/reference.json")
review=$work/review
raw=()
[ "$weights" = raw ] && raw=(--raw-weights)
"$trainer" compare --checkpoint "untrained=$work/untrained" --checkpoint "reference=$reference" \
  --checkpoint "trained=$work/run" "${raw[@]}" --data "$work/held-out" --clips "$n_held" --out "$review" >/dev/null
report=$review/metrics.json

echo
echo "preset $preset${sets[*]:+ (${sets[*]})}: $steps steps in $seconds s (budget $budget), $weights weights"
echo "held-out: $n_held clips of $frames frames from ${#held[@]} videos never trained on"
echo "reference: $label ($reference)"
echo
printf '%-14s %17s %17s %17s\n' "" untrained reference trained
printf '%-14s %8s %8s %8s %8s %8s %8s\n' frame "PSNR dB" SSIM "PSNR dB" SSIM "PSNR dB" SSIM
row() {  # NAME then three PSNR/SSIM pairs
  printf '%-14s %8.2f %8.3f %8.2f %8.3f %8.2f %8.3f\n' "$@"
}
jq -r '.per_frame as $p | range(0; $p.trained.psnr | length) as $t |
  "\($t)\t\($p.untrained.psnr[$t])\t\($p.untrained.ssim[$t])\t\($p.reference.psnr[$t])\t\($p.reference.ssim[$t])\t\($p.trained.psnr[$t])\t\($p.trained.ssim[$t])"' "$report" |
  while IFS=$'\t' read -r t a b c d e f; do row "$t" "$a" "$b" "$c" "$d" "$e" "$f"; done
# Per source video (held-out clips are named <source>_<k>), then every clip.
jq -r '[.clips[] | {s: (.source | sub("_[0-9]+\\.[a-z0-9]+$"; "")), m: .metrics}] | group_by(.s)[] |
  (length) as $n | "\(.[0].s)\t\(map(.m.untrained.psnr) | add / $n)\t\(map(.m.untrained.ssim) | add / $n)\t\(map(.m.reference.psnr) | add / $n)\t\(map(.m.reference.ssim) | add / $n)\t\(map(.m.trained.psnr) | add / $n)\t\(map(.m.trained.ssim) | add / $n)"' "$report" |
  while IFS=$'\t' read -r t a b c d e f; do row "$t" "$a" "$b" "$c" "$d" "$e" "$f"; done
jq -r '.mean | "all\t\(.untrained.psnr)\t\(.untrained.ssim)\t\(.reference.psnr)\t\(.reference.ssim)\t\(.trained.psnr)\t\(.trained.ssim)"' "$report" |
  while IFS=$'\t' read -r t a b c d e f; do row "$t" "$a" "$b" "$c" "$d" "$e" "$f"; done
echo
# The validation curve during training: held-out PSNR and codebook usage at each validation.
echo "validation during training (step, valid/psnr, valid/ssim, valid/codebook_usage):"
jq -r 'select(has("valid/psnr")) | "\(.step)\t\(.["valid/psnr"])\t\(.["valid/ssim"])\t\(.["valid/codebook_usage"])"' \
  "$work/run/metrics.jsonl" | while IFS=$'\t' read -r st p ss u; do printf '  %6s %8.2f %8.3f %8.3f\n' "$st" "$p" "$ss" "$u"; done
echo
echo "run: $work/run   review: $review (grid.png, metrics.json)"
