#!/usr/bin/env bash
# pack and data.type shards through the real binary: pack procedural clips, refuse a folder that
# is not empty and data that is packed already, describe and verify the shards (data-info),
# train from them, and name a truncated shard. Usage: pack_shards.sh TRAINER WORKDIR
set -uo pipefail
trainer=$1
work=$2
rm -rf "$work"; mkdir -p "$work"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
data='"image_size": 16, "num_frames": 5, "workers": 1'
model='"model": {"init_dim": 8, "max_dim": 16, "layers": ["residual", "compress_space", "compress_time"],
         "input_conv_kernel": [3, 3, 3], "quantizer": {"codebook_size": 64}}'
echo "{\"version\": 1, \"data\": {\"type\": \"synthetic\", \"synthetic_clips\": 12, $data}}" >"$work/procedural.json"
echo "{\"version\": 1, \"data\": {\"type\": \"shards\", \"path\": \"$work/shards\", $data}, $model,
       \"loss\": {\"perceptual_weight\": 0, \"adversarial_weight\": 0},
       \"train\": {\"batch_size\": 2, \"log_every\": 1, \"valid_every\": 2, \"threads\": 1}}" >"$work/shards.json"

# 1. 12 procedural clips of 3840 bytes, 5 per shard: 3 shards, a JSON summary on stdout.
"$trainer" pack --config "$work/procedural.json" --out "$work/shards" --shard-mb 0.02 >"$work/pack.out" 2>"$work/pack.err"
code=$?
check "pack exits 0" "[ $code -eq 0 ]"
check "pack prints 12 clips in 3 shards" "grep -q '\"shards\":3,\"clips\":12,\"sources\":12' '$work/pack.out'"
check "the folder holds the manifest and 3 shards" "[ \"\$(ls '$work/shards' | tr '\n' ' ')\" = 'manifest.json shard_00000.safetensors shard_00001.safetensors shard_00002.safetensors ' ]"

# 2. Refusals: a folder that is not empty, data that is packed already.
"$trainer" pack --config "$work/procedural.json" --out "$work/shards" >"$work/again.out" 2>"$work/again.err"
code=$?
check "pack into a folder that is not empty exits 2" "[ $code -eq 2 ] && grep -q 'is not an empty folder' '$work/again.err' && [ ! -s '$work/again.out' ]"
"$trainer" pack --config "$work/shards.json" --out "$work/other" >"$work/twice.out" 2>"$work/twice.err"
code=$?
check "pack of shards exits 2" "[ $code -eq 2 ] && grep -q 'packed already' '$work/twice.err' && [ ! -e '$work/other' ]"

# 3. data-info describes the shards and checks their content hashes.
"$trainer" data-info --config "$work/shards.json" --verify >"$work/info.out" 2>"$work/info.err"
code=$?
check "data-info exits 0" "[ $code -eq 0 ]"
check "data-info counts 12 sources, 3 shards, verified" "grep -q '\"files\":12,' '$work/info.out' && grep -q '\"count\":3,\"usable\":3,\"clips\":12' '$work/info.out' && grep -q '\"verified\":true' '$work/info.out'"

# 4. Training from the shards: 4 steps, validation, a checkpoint.
"$trainer" train --config "$work/shards.json" --set train.max_steps=4 --run-dir "$work/run" >"$work/run.out" 2>"$work/run.err"
code=$?
check "training from shards exits 0 with done completed" "[ $code -eq 0 ] && tail -1 '$work/run.out' | grep -q '\"status\":\"completed\",\"step\":4'"
check "the run validated and checkpointed" "grep -q 'valid/psnr' '$work/run/metrics.jsonl' && [ -f '$work/run/checkpoints/step_4/COMPLETE' ]"
check "the log describes the shards" "grep -q 'shards in $work/shards: 12 files, 12 clips in 3 shards' '$work/run/logs/rank_0.log'"

# 5. A truncated shard is named and left out, by data-info and by training.
truncate -s 1000 "$work/shards/shard_00001.safetensors"
"$trainer" data-info --config "$work/shards.json" >"$work/cut.out" 2>"$work/cut.err"
code=$?
check "data-info names the truncated shard" "[ $code -eq 0 ] && grep -q '\"path\":\"shard_00001.safetensors\",\"reason\":\"truncated: 1000 bytes' '$work/cut.out' && grep -q '\"files\":7,' '$work/cut.out'"
"$trainer" train --config "$work/shards.json" --set train.max_steps=1 --run-dir "$work/run2" >"$work/run2.out" 2>"$work/run2.err"
code=$?
check "training warns about the truncated shard and completes" "[ $code -eq 0 ] && grep -q '\"code\":\"data_skipped\".*shard_00001.safetensors: truncated' '$work/run2.out'"

[ $fail -eq 0 ] && rm -rf "$work"
exit $fail
