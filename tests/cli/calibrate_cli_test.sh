#!/usr/bin/env bash
# `octet calibrate`, `octet merge` and `octet quantize --state` end to end on the digits CNN (issue 19): for every
# exactly mergeable observer, 4 shards merged (in any order and grouping) give a state byte-identical to one process
# over all the data, and then the same .octet file, also equal to `octet quantize --calib` itself; calibration
# streamed from a folder of files equals one file; the refusals (order-dependent observers in shards, a state of
# another model, partial or doubled shards) and --shard's usage errors name their reason and flag. `octet quantize
# --calib` streams from a folder or a list of files as calibrate does, with the same result.
# Usage: calibrate_cli_test.sh OCTET MODELS_DIR
set -uo pipefail
octet=$1
models=$2
# shellcheck source=tests/cli/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
test_begin octet-calibrate-test

# The CNN reads images [N, 1, 8, 8]; the calibration set (256 samples) also as a folder of three files whose
# boundaries fall inside batches.
/usr/bin/python3 - "$models" "$TMP" <<'PY'
import os, sys, numpy as np
m, t = sys.argv[1], sys.argv[2]
x = np.load(m + "/digits_calib_x.npy").reshape(-1, 1, 8, 8)
np.save(t + "/calib.npy", x)
os.mkdir(t + "/parts")
for i, (a, b) in enumerate([(0, 100), (100, 156), (156, 256)]):
    np.save(f"{t}/parts/{i}.npy", x[a:b])
PY
m="$models/digits_cnn.onnx"
data=(--calib "image=$TMP/calib.npy" --calib-batch 24)  # 11 batches: shards of 2, 3, 3, 3

for flags in "--activation-observer minmax" "--activation-observer minmax --per-channel" \
             "--activation-observer percentile" "--activation-observer entropy" "--activation-observer mse" \
             "--activation-observer pow2_histogram"; do
  read -r -a f <<<"$flags"
  d="$TMP/${f[1]}${f[2]:-}"
  mkdir -p "$d"
  expect_ok "$octet" calibrate "$m" "${data[@]}" "${f[@]}" -o "$d/single.json"
  for i in 0 1 2 3; do expect_ok "$octet" calibrate "$m" "${data[@]}" "${f[@]}" --shard "$i/4" -o "$d/s$i.json"; done
  expect_ok "$octet" merge "$d/s2.json" "$d/s0.json" "$d/s3.json" "$d/s1.json" -o "$d/merged.json"
  expect_ok "$octet" merge "$d/s3.json" "$d/s1.json" -o "$d/b.json"
  expect_ok "$octet" merge "$d/s0.json" "$d/s2.json" -o "$d/a.json"
  expect_ok "$octet" merge "$d/b.json" "$d/a.json" -o "$d/merged2.json"
  expect_same "$d/single.json" "$d/merged.json" "$flags: 4 shards merged vs one process"
  expect_same "$d/single.json" "$d/merged2.json" "$flags: shards merged in pairs vs one process"
  cmp -s "$d/s0.json" "$d/s1.json" && fail "$flags: two shards wrote the same state"
  expect_ok "$octet" quantize "$m" --state "$d/single.json" "${f[@]}" -o "$d/single.octet"
  expect_ok "$octet" quantize "$m" --state "$d/merged.json" "${f[@]}" -o "$d/merged.octet"
  expect_ok "$octet" quantize "$m" "${data[@]}" "${f[@]}" --no-guard -o "$d/direct.octet"
  expect_same "$d/single.octet" "$d/merged.octet" "$flags: .octet from the merged state vs one process"
  expect_same "$d/single.octet" "$d/direct.octet" "$flags: .octet from the state vs octet quantize --calib"
done

# Streaming from a folder, and from a list, equals the single file.
d="$TMP/minmax"
expect_ok "$octet" calibrate "$m" --calib "image=$TMP/parts" --calib-batch 24 --activation-observer minmax \
  -o "$d/folder.json"
expect_same "$d/single.json" "$d/folder.json" "a folder of .npy files vs one file"
expect_ok "$octet" calibrate "$m" --calib "image=$TMP/parts/0.npy,$TMP/parts/1.npy,$TMP/parts/2.npy" --calib-batch 24 \
  --activation-observer minmax -o "$d/list.json"
expect_same "$d/single.json" "$d/list.json" "a list of .npy files vs one file"
# `octet quantize --calib` streams its files too (folders and lists included): the same .octet as from one file.
expect_ok "$octet" quantize "$m" --calib "image=$TMP/parts" --calib-batch 24 --activation-observer minmax --no-guard \
  -o "$d/folder.octet"
expect_same "$d/direct.octet" "$d/folder.octet" "octet quantize --calib: a folder of .npy files vs one file"
expect_ok "$octet" quantize "$m" --calib "image=$TMP/parts/0.npy,$TMP/parts/1.npy,$TMP/parts/2.npy" --calib-batch 24 \
  --activation-observer minmax --no-guard -o "$d/list.octet"
expect_same "$d/direct.octet" "$d/list.octet" "octet quantize --calib: a list of .npy files vs one file"
# With the guard, the streamed run holds back the last fifth of the 11 batches (2 batches: 24 + 16 samples).
expect_output 0 "on 40 held-back calibration samples" -- "$octet" quantize "$m" --calib "image=$TMP/parts" --calib-batch 24 \
  --activation-observer minmax -o "$d/guarded.octet"
grep -q "\"num_samples\":256" "$d/single.json" || fail "the state does not count 256 samples"
grep -q "\"model_fingerprint\":\"fnv1a64:" "$d/single.json" || fail "the state has no model fingerprint"

# Order-dependent observers are refused in shards, with the reason; in one process they work.
expect_output 1 "rebins its histogram" -- "$octet" calibrate "$m" "${data[@]}" --activation-observer histogram \
  --shard 1/4 -o "$TMP/x.json"
expect_output 1 "moving average" -- "$octet" calibrate "$m" "${data[@]}" --activation-observer moving_average_minmax \
  --shard 0/2 -o "$TMP/x.json"
[ ! -e "$TMP/x.json" ] || fail "a refused calibration wrote its output"
expect_ok "$octet" calibrate "$m" "${data[@]}" --activation-observer histogram -o "$TMP/h.json"
expect_ok "$octet" quantize "$m" --state "$TMP/h.json" --activation-observer histogram -o "$TMP/h.octet"
expect_ok "$octet" quantize "$m" "${data[@]}" --activation-observer histogram --no-guard -o "$TMP/h2.octet"
expect_same "$TMP/h.octet" "$TMP/h2.octet" "histogram: .octet from the state vs octet quantize --calib"

# Merging refuses doubled data, mixed flags, mixed shard counts; quantize refuses partial states, other flags, and
# states of another model.
p="$TMP/pow2_histogram"
expect_output 1 "shard 1/4 is also in another state" -- "$octet" merge "$p/s1.json" "$p/b.json" -o "$TMP/x.json"
expect_output 1 "already covers all the data" -- "$octet" merge "$p/single.json" "$p/s1.json" -o "$TMP/x.json"
expect_output 1 "different flags" -- "$octet" merge "$p/s0.json" "$TMP/minmax/s1.json" -o "$TMP/x.json"
expect_ok "$octet" calibrate "$m" "${data[@]}" --activation-observer pow2_histogram --shard 1/2 -o "$TMP/half.json"
expect_output 1 "one --shard count" -- "$octet" merge "$p/s0.json" "$TMP/half.json" -o "$TMP/x.json"
expect_output 1 "merge the states of all 4 shards" -- "$octet" quantize "$m" --state "$p/a.json" \
  --activation-observer pow2_histogram -o "$TMP/x.octet"
expect_output 1 "give the same quantization flags" -- "$octet" quantize "$m" --state "$p/single.json" \
  --activation-observer minmax -o "$TMP/x.octet"
/usr/bin/python3 - "$models" "$TMP" <<'PY'
import sys, numpy as np
np.save(sys.argv[2] + "/mlp.npy", np.load(sys.argv[1] + "/digits_calib_x.npy"))
PY
expect_ok "$octet" calibrate "$models/digits_mlp.onnx" --calib "x=$TMP/mlp.npy" -o "$TMP/mlp.json"
expect_output 1 "made from another model" -- "$octet" quantize "$m" --state "$TMP/mlp.json" -o "$TMP/x.octet"
[ ! -e "$TMP/x.octet" ] || fail "a refused quantize wrote its output"
expect_output 2 "--state applies to --mode static only" -- "$octet" quantize "$m" --mode dynamic \
  --state "$p/single.json" -o "$TMP/x.octet"

# --weight-bits as quantize takes it: a 4-bit state converts to the same .octet as quantize --calib --weight-bits 4
# (and differs from the 8-bit one; before, no state could feed quantize --weight-bits); the state records the bits,
# which quantize --state shows when its own flags differ, and a bad value names the flag.
d="$TMP/w4"
mkdir -p "$d"
w4=(--activation-observer minmax --per-channel --weight-bits 4)
expect_ok "$octet" calibrate "$m" "${data[@]}" "${w4[@]}" -o "$d/single.json"
grep -q '"weight_bits":4' "$d/single.json" || fail "the 4-bit state does not record --weight-bits 4"
expect_ok "$octet" quantize "$m" --state "$d/single.json" "${w4[@]}" -o "$d/state.octet"
expect_ok "$octet" quantize "$m" "${data[@]}" "${w4[@]}" --no-guard -o "$d/direct.octet"
expect_same "$d/state.octet" "$d/direct.octet" "--weight-bits 4: .octet from the state vs octet quantize --calib"
cmp -s "$d/state.octet" "$TMP/minmax--per-channel/single.octet" && fail "--weight-bits 4 wrote the 8-bit .octet"
expect_output 1 '"weight_bits":4' -- "$octet" quantize "$m" --state "$d/single.json" --activation-observer minmax \
  --per-channel -o "$TMP/x.octet"
expect_output 2 "--weight-bits must be 2..8" -- "$octet" calibrate "$m" "${data[@]}" --weight-bits 9 -o "$TMP/x.json"

# --target as quantize takes it: a pow2-int8 state converts to the same .octet as quantize --calib --target pow2-int8
# (power-of-two scales applied after loading the state); the state records the target, quantize --state without it
# shows it, and --target excludes the observer flags it replaces.
d="$TMP/pow2"
mkdir -p "$d"
expect_ok "$octet" calibrate "$m" "${data[@]}" --target pow2-int8 -o "$d/single.json"
grep -q '"target":"pow2-int8"' "$d/single.json" || fail "the pow2-int8 state does not record --target"
expect_ok "$octet" quantize "$m" --state "$d/single.json" --target pow2-int8 -o "$d/state.octet"
expect_ok "$octet" quantize "$m" "${data[@]}" --target pow2-int8 --no-guard -o "$d/direct.octet"
expect_same "$d/state.octet" "$d/direct.octet" "--target pow2-int8: .octet from the state vs octet quantize --calib"
expect_output 1 '"target":"pow2-int8"' -- "$octet" quantize "$m" --state "$d/single.json" -o "$TMP/x.octet"
expect_output 2 "excludes" -- "$octet" calibrate "$m" "${data[@]}" --target pow2-int8 --per-channel -o "$TMP/x.json"
expect_output 2 "--target" -- "$octet" calibrate "$m" "${data[@]}" --target no-such-target -o "$TMP/x.json"

# --shard usage errors name the flag (exit 2).
for bad in 4/4 -1/4 1/0 x/4 1/ /4 1/4x 14; do
  expect_output 2 "--shard must be I/N" -- "$octet" calibrate "$m" "${data[@]}" --shard "$bad" -o "$TMP/x.json"
done
expect_output 2 "--shard and --mpi" -- "$octet" calibrate "$m" "${data[@]}" --shard 0/2 --mpi -o "$TMP/x.json"
# Data errors name the flag and the file.
expect_output 1 "--calib image" -- "$octet" calibrate "$m" --calib "image=$TMP/missing.npy" -o "$TMP/x.json"
expect_output 1 "calibration needs samples for input 'image'" -- "$octet" calibrate "$m" \
  --calib "other=$TMP/calib.npy" -o "$TMP/x.json"

test_end calibrate_cli
