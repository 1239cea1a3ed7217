#!/usr/bin/env bash
# `octet run`, `octet inspect`, `octet bench model`, `octet train`, `octet qat`, `octet quantize`'s guard and
# `octet compare` end to end: outputs against PyTorch's (tests/data/models), file names, exit
# statuses (0 ok, 1 failure naming file/node, 2 usage), and no partial output on failure.
# Usage: run_command_test.sh OCTET MODELS_DIR
set -uo pipefail
octet=$1
models=$2
# shellcheck source=tests/cli/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/test_lib.sh"
test_begin octet-run-test

# expect STATUS PATTERN -- command...: expect_output, and no C++ field name in the output: a command-line user cannot
# act on one, so messages name the option instead.
expect() {
  expect_output "$@"
  ! grep -qF "CompileOptions" <<<"$output" || fail "'${*:4}' names a C++ option: $output"
}

m=$models
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.ones((1, 4), np.float32))" "$TMP/x14.npy"
expect 0 "logits: f32 [7, 3, 50]" -- "$octet" run "$m/lstm_lm.onnx" --input tokens="$m/lstm_lm.input0.npy" \
  --input h0="$m/lstm_lm.input1.npy" --input c0="$m/lstm_lm.input2.npy" --output-dir "$TMP/lm"
for k in 0 1 2; do
  name=$(echo logits h c | cut -d' ' -f$((k + 1)))
  [ -f "$TMP/lm/$name.npy" ] || fail "missing $TMP/lm/$name.npy"
done
/usr/bin/python3 - "$m" "$TMP/lm" <<'PY' || fail "octet run outputs differ from PyTorch's"
import sys, numpy as np
m, out = sys.argv[1], sys.argv[2]
for k, name in enumerate(["logits", "h", "c"]):
    want = np.load("%s/lstm_lm.output%d.npy" % (m, k)); got = np.load("%s/%s.npy" % (out, name))
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert got.dtype == np.float32 and got.shape == want.shape and err < 1e-4, (name, err)
PY

expect 0 "" -- "$octet" run "$m/digits_cnn.onnx" --input image="$m/digits_cnn.input0.npy" --output-dir "$TMP/cnn" --threads 2
[ -f "$TMP/cnn/logits.npy" ] || fail "missing $TMP/cnn/logits.npy"
# The float fusion pass changes speed only: the same bytes without it.
expect 0 "" -- "$octet" run "$m/digits_cnn.onnx" --input image="$m/digits_cnn.input0.npy" --output-dir "$TMP/cnn_nofuse" \
  --threads 2 --float-fusion off
cmp -s "$TMP/cnn/logits.npy" "$TMP/cnn_nofuse/logits.npy" || fail "octet run --float-fusion off changed the output"
expect 2 "float-fusion" -- "$octet" run "$m/digits_cnn.onnx" --input image="$m/digits_cnn.input0.npy" \
  --output-dir "$TMP/x" --float-fusion maybe

# Output names that are not file names are sanitised.
expect 0 "" -- "$octet" run "$m/odd_output_names.onnx" --input x="$TMP/x14.npy" --output-dir "$TMP/odd"
[ -f "$TMP/odd/_hidden.npy" ] && [ -f "$TMP/odd/_._logits_y_0.npy" ] || fail "unexpected files: $(ls -A "$TMP/odd")"
[ ! -e "$TMP/logits" ] || fail "an output name escaped the output folder"

# Failures (exit 1) name the file, the input or the node.
expect 1 "input 'h0' is not given" -- "$octet" run "$m/lstm_lm.onnx" --input tokens="$m/lstm_lm.input0.npy" \
  --output-dir "$TMP/x"
expect 1 "has no input named 'nope'" -- "$octet" run "$m/digits_mlp.onnx" --input nope="$m/digits_mlp.input0.npy" \
  --output-dir "$TMP/x"
expect 1 "input 'image' is declared [-1, 1, 8, 8], which shape [32, 64] does not match" -- "$octet" run "$m/digits_cnn.onnx" \
  --input image="$m/digits_mlp.input0.npy" --output-dir "$TMP/x"
expect 1 "unsupported_ops.onnx" -- "$octet" run "$m/malformed/unsupported_ops.onnx" --input x="$m/digits_mlp.input0.npy" \
  --output-dir "$TMP/x"
expect 1 "node 'softmax' (Softmax)" -- "$octet" run "$m/malformed/bad_axis_softmax.onnx" --input x="$TMP/x14.npy" \
  --output-dir "$TMP/x"
expect 0 "y: f32 [1, 3]" -- "$octet" run "$m/malformed/base.onnx" --input x="$TMP/x14.npy" --output-dir "$TMP/base"
expect 1 "no_such.onnx" -- "$octet" run "$TMP/no_such.onnx" --input x="$m/digits_mlp.input0.npy" --output-dir "$TMP/x"
[ ! -e "$TMP/x" ] || fail "a failed run created its output folder"
# An output folder that cannot be written: no output, exit 1.
touch "$TMP/file"
expect 1 "" -- "$octet" run "$m/digits_mlp.onnx" --input x="$m/digits_mlp.input0.npy" --output-dir "$TMP/file/sub"

# A model without graph inputs runs without --input.
expect 0 "y: f32 [2, 3]" -- "$octet" run "$m/constant_only.onnx" --output-dir "$TMP/const"
/usr/bin/python3 -c "import numpy as np, sys; y = np.load(sys.argv[1]); assert (y == np.arange(6, dtype=np.float32).reshape(2, 3) ** 2).all(), y" \
  "$TMP/const/y.npy" || fail "octet run of a model without inputs: wrong output"
# A training-domain model names its unsupported op, not a missing opset.
expect 1 "'Adagrad_0' (ai.onnx.preview.training.Adagrad)" -- "$octet" run "$m/malformed/training_domain.onnx" \
  --output-dir "$TMP/x"

# Usage errors (exit 2).
expect 2 "--input is required: '$m/digits_mlp.onnx' has input(s) x (use --input x=FILE.npy)" -- "$octet" run \
  "$m/digits_mlp.onnx" --output-dir "$TMP/x"
expect 2 "--input must be NAME=VALUE" -- "$octet" run "$m/digits_mlp.onnx" --input "$m/digits_mlp.input0.npy" \
  --output-dir "$TMP/x"
expect 2 "names 'x' twice" -- "$octet" run "$m/digits_mlp.onnx" --input x=a.npy --input x=b.npy --output-dir "$TMP/x"

# inspect: nodes, shapes (a symbolic batch bound with --input-shape), parameter counts.
expect 0 "/cnn/bn1/BatchNormalization" -- "$octet" inspect "$m/digits_cnn.onnx"
expect 0 "1994 parameters" -- "$octet" inspect "$m/digits_cnn.onnx"
expect 0 "output logits: f32 [batch, 10]" -- "$octet" inspect "$m/digits_mlp.onnx"
expect 0 "output logits: f32 [4, 10]" -- "$octet" inspect "$m/digits_mlp.onnx" --input-shape x=4,64
expect 2 "comma-separated" -- "$octet" inspect "$m/digits_mlp.onnx" --input-shape x=4,-1
expect 1 "cycle" -- "$octet" inspect "$m/malformed/cycle.onnx"
# inspect validates as run does: each model that run refuses fails inspect (exit 1) naming its node and attribute
# or input, after printing what it could read (the ops line).
while read -r file pattern; do
  expect 1 "failed to inspect '$m/malformed/$file': failed to compile node $pattern" -- "$octet" inspect \
    "$m/malformed/$file"
  grep -q "^ops: " <<<"$("$octet" inspect "$m/malformed/$file" 2>/dev/null)" || fail "inspect $file printed no ops line"
done <<'LIST'
conv_negative_pads.onnx 'conv' (Conv): pads must be >= 0, got [-1, 0, 0, 0]
conv_pads_length.onnx 'conv' (Conv): pads must have 4 values, got 2
conv_stride_zero.onnx 'conv' (Conv): strides must be positive, got [0, 1]
conv_dilation_zero.onnx 'conv' (Conv): dilations must be positive, got [1, 0]
conv_kernel_shape_mismatch.onnx 'conv' (Conv): kernel_shape [2, 2] does not match the weight's spatial dims [3, 3]
conv_float_strides.onnx 'conv' (Conv): attribute 'strides' must be ints, got floats
conv_group_not_dividing.onnx 'conv' (Conv): group 3 must be positive and divide the input channels 2
conv_channel_mismatch.onnx 'conv' (Conv): W [4, 3, 3, 3] expects 3 input channels (group 1), X [1, 2, 5, 5] has 2
conv_missing_weight.onnx 'conv' (Conv): input W (the weight) is missing
bad_axis_flatten.onnx 'flatten' (Flatten): axis must be in [-2, 2], got 3
bad_axis_concat.onnx 'concat' (Concat): axis must be in [-2, 2), got -3
bad_axis_softmax.onnx 'softmax' (Softmax): axis must be in [-2, 2), got 4
gemm_shape_mismatch.onnx 'fc' (Gemm): inner dimensions differ: A [1, 4] (transA=0) and B [3, 4] (transB=0)
gemm_bias_broadcast.onnx 'fc' (Gemm): input C (bias) [2] does not broadcast to the output [1, 3]
transpose_bad_perm.onnx 'transpose' (Transpose): perm [1, 1] is not a permutation of 0..1
split_sizes_sum.onnx 'split' (Split): split sizes sum to 2, axis 1 has 3
maxpool_no_kernel_shape.onnx 'pool' (MaxPool): required attribute 'kernel_shape' is missing
LIST
expect 0 "output y: f32 [1, 4, 5, 5]" -- "$octet" inspect "$m/malformed/conv_valid.onnx"
# A dynamic dim alone is no failure; a broken node behind one still is (checked with the unknown dim taken as 1).
expect 0 "ops: Conv 1, Relu 1" -- "$octet" inspect "$m/dynamic_batch/conv.onnx"
expect 1 "node 'conv' (Conv): strides must be positive, got [0, 1]" -- "$octet" inspect \
  "$m/dynamic_batch/conv_stride_zero.onnx"

# bench model: a timed run (JSON), per op type through the hooks; symbolic dims need --input-shape.
expect 0 '"op":"model"' -- "$octet" bench model "$m/digits_cnn.onnx" --input-shape image=1,1,8,8 --repetitions 1 --json
expect 0 '"op_type":"BatchNormalization"' -- "$octet" bench model "$m/digits_cnn.onnx" --input-shape image=1,1,8,8 \
  --repetitions 1 --per-op --json
expect 0 "Gemm" -- "$octet" bench model "$m/digits_mlp.onnx" --input-shape x=1,64 --repetitions 1 --per-op

# Dynamic input dims (tests/data/models/make_dynamic.py): inspect prints them symbolically (dim_param names, "?"
# for unnamed ones and what is no product of symbols), never failing; bench model assumes 1 for each and says so.
dyn=$m/dynamic
for f in digits_mlp dynamic/cnn_named dynamic/cnn_unnamed dynamic/cnn_minus1 dynamic/seq_named dynamic/lstm_unnamed; do
  out=$("$octet" inspect "$m/$f.onnx" 2>&1) || fail "inspect $f exited $?: $out"
  ! grep -qF "shapes unknown" <<<"$out" || fail "inspect $f: $out"
done
expect 0 "input  x: f32 [batch, 1, 8, 8]" -- "$octet" inspect "$dyn/cnn_named.onnx"
expect 0 "(p) -> f32 [batch, 64]" -- "$octet" inspect "$dyn/cnn_named.onnx"
expect 0 "activation arena: 4480 bytes with batch = 1" -- "$octet" inspect "$dyn/cnn_named.onnx"
expect 0 "output y: f32 [?, 10]" -- "$octet" inspect "$dyn/cnn_unnamed.onnx"
expect 0 "input  x: f32 [?, 1, 8, 8]" -- "$octet" inspect "$dyn/cnn_minus1.onnx"
expect 0 "(r) -> f32 [?, 4, 4, 4]" -- "$octet" inspect "$dyn/cnn_minus1.onnx"
expect 0 "input  img: f32 [1, 1, h, 4]" -- "$octet" inspect "$dyn/seq_named.onnx"
expect 0 "(x, proj.w) -> f32 [batch, seq, 8]" -- "$octet" inspect "$dyn/seq_named.onnx"
expect 0 "output y: f32 [batch*seq, 8]" -- "$octet" inspect "$dyn/seq_named.onnx"
expect 0 "output z: f32 [1, 2, ?, 4]" -- "$octet" inspect "$dyn/seq_named.onnx"  # a stride-2 conv over h
expect 0 "output y: f32 [6, 8]" -- "$octet" inspect "$dyn/seq_named.onnx" --input-shape x=2,3,16
expect 0 "output z: f32 [1, 2, 3, 4]" -- "$octet" inspect "$dyn/seq_named.onnx" --input-shape img=1,1,5,4
expect 0 "input  tokens: s32 [35, ?]" -- "$octet" inspect "$dyn/lstm_unnamed.onnx"
expect 0 "-> f32 [35, 1, ?, 12], f32 [1, ?, 12], f32 [1, ?, 12]" -- "$octet" inspect "$dyn/lstm_unnamed.onnx"
expect 0 "output logits: f32 [35, ?, 50]" -- "$octet" inspect "$dyn/lstm_unnamed.onnx"
expect 0 "output logits: f32 [35, 4, 50]" -- "$octet" inspect "$dyn/lstm_unnamed.onnx" --input-shape tokens=35,4 \
  --input-shape h0=1,4,12 --input-shape c0=1,4,12
# Shapes that contradict the model: the message shows what is wrong and names --input-shape, not a C++ option.
expect 0 "which shape [36, 4] does not match" -- "$octet" inspect "$dyn/lstm_unnamed.onnx" --input-shape tokens=36,4
expect 0 "must be [1, 4, 12], got [1, 1, 12]; give the input shapes with --input-shape" -- "$octet" inspect \
  "$dyn/lstm_unnamed.onnx" --input-shape tokens=35,4

# bench_dyn NAME ARGS...: runs bench model --json, keeping stdout in $TMP/NAME.out and stderr in $TMP/NAME.err.
bench_dyn() {
  local name=$1
  shift
  "$octet" bench model "$@" --repetitions 1 --json >"$TMP/$name.out" 2>"$TMP/$name.err" || fail "bench model $*: $(cat "$TMP/$name.err")"
}
arena() { /usr/bin/python3 -c "import json, sys; print(json.loads(open(sys.argv[1]).readline())['arena_bytes'])" "$1"; }
bench_dyn mlp "$m/digits_mlp.onnx"
bench_dyn mlp1 "$m/digits_mlp.onnx" --input-shape x=1,64
bench_dyn mlp4 "$m/digits_mlp.onnx" --input-shape x=4,64
[ "$(cat "$TMP/mlp.err")" = "octet: input 'x' dim 0 ('batch') is dynamic: assuming 1 (set it with --input-shape x=1,64 or --input x=FILE.npy)" ] ||
  fail "bench model digits_mlp: stderr is: $(cat "$TMP/mlp.err")"
[ ! -s "$TMP/mlp1.err" ] || fail "bench model with --input-shape: stderr is: $(cat "$TMP/mlp1.err")"
[ "$(arena "$TMP/mlp.out")" -eq "$(arena "$TMP/mlp1.out")" ] && [ "$(arena "$TMP/mlp4.out")" -gt "$(arena "$TMP/mlp1.out")" ] ||
  fail "bench model did not run batch 1: arena $(arena "$TMP/mlp.out"), $(arena "$TMP/mlp1.out") at 1, $(arena "$TMP/mlp4.out") at 4"
bench_dyn lstm "$dyn/lstm_unnamed.onnx"
[ "$(wc -l <"$TMP/lstm.err")" -eq 3 ] || fail "bench model lstm_unnamed: want 3 assumption lines: $(cat "$TMP/lstm.err")"
grep -qF "octet: input 'tokens' dim 1 (unnamed) is dynamic: assuming 1 (set it with --input-shape tokens=35,1" "$TMP/lstm.err" ||
  fail "bench model lstm_unnamed: $(cat "$TMP/lstm.err")"
grep -qF "input 'c0' dim 1 (unnamed) is dynamic: assuming 1 (set it with --input-shape c0=1,1,12" "$TMP/lstm.err" ||
  fail "bench model lstm_unnamed: $(cat "$TMP/lstm.err")"
bench_dyn seq "$dyn/seq_named.onnx" --input-shape x=2,3,16
[ "$(cat "$TMP/seq.err")" = "octet: input 'img' dim 2 ('h') is dynamic: assuming 1 (set it with --input-shape img=1,1,1,4 or --input img=FILE.npy)" ] ||
  fail "bench model seq_named: stderr is: $(cat "$TMP/seq.err")"
# --input files give the shape (and the data): no assumption.
bench_dyn cnn_file "$dyn/cnn_named.onnx" --input x="$m/digits_cnn.input0.npy"
bench_dyn cnn_shape "$dyn/cnn_named.onnx" --input-shape x=32,1,8,8
[ ! -s "$TMP/cnn_file.err" ] || fail "bench model with --input: stderr is: $(cat "$TMP/cnn_file.err")"
[ "$(arena "$TMP/cnn_file.out")" -eq "$(arena "$TMP/cnn_shape.out")" ] || fail "bench model --input: not the file's shape"
bench_dyn lm "$m/lstm_lm.onnx" --input tokens="$m/lstm_lm.input0.npy" --input h0="$m/lstm_lm.input1.npy" \
  --input c0="$m/lstm_lm.input2.npy"
expect 2 "name 'x' more than once" -- "$octet" bench model "$dyn/cnn_named.onnx" --input x="$m/digits_cnn.input0.npy" \
  --input-shape x=32,1,8,8
expect 1 "does not match" -- "$octet" bench model "$dyn/cnn_named.onnx" --input x="$m/digits_mlp.input0.npy"

# train: the MLP on 200 test images for 2 epochs; one line per epoch, a checkpoint folder with a manifest, usage
# and runtime errors. (The digits CNN's accuracy figure is the [train] test in tests/quant/training.)
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:200]); np.save(sys.argv[4], np.load(sys.argv[3])[:200])" \
  "$m/digits_test_x.npy" "$TMP/tx.npy" "$m/digits_test_labels.npy" "$TMP/ty.npy"
expect 0 "epoch 2/2: lr 0.1" -- "$octet" train "$m/digits_mlp.onnx" --data "$TMP/tx.npy" --labels "$TMP/ty.npy" \
  --epochs 2 --lr 0.1 --reset-parameters -o "$TMP/ckpt"
[ -f "$TMP/ckpt/manifest.json" ] || fail "octet train wrote no $TMP/ckpt/manifest.json"
grep -qF '"fc1.weight"' "$TMP/ckpt/manifest.json" || fail "checkpoint manifest lacks fc1.weight"
ls -d "$TMP"/ckpt.tmp-* >/dev/null 2>&1 && fail "octet train left a temporary checkpoint folder"
expect 0 "test accuracy" -- "$octet" train "$m/digits_mlp.onnx" --data "$TMP/tx.npy" --labels "$TMP/ty.npy" \
  --epochs 1 --test-data "$TMP/tx.npy" --test-labels "$TMP/ty.npy" --schedule step -o "$TMP/ckpt"
expect 2 "unknown learning-rate schedule" -- "$octet" train "$m/digits_mlp.onnx" --data "$TMP/tx.npy" \
  --labels "$TMP/ty.npy" --schedule linear -o "$TMP/ckpt2"
expect 2 "" -- "$octet" train "$m/digits_mlp.onnx" --data "$TMP/tx.npy" -o "$TMP/ckpt2"
expect 1 "do not match" -- "$octet" train "$m/digits_mlp.onnx" --data "$TMP/tx.npy" --labels "$m/digits_labels.npy" \
  -o "$TMP/ckpt2"
[ -e "$TMP/ckpt2" ] && fail "a failed octet train left $TMP/ckpt2"

# compare: quantize the digits CNN, then the numeric suite on two batches of test images; the JSON report (schema
# version 1, three weights) and the HTML page are written; failures write neither (no partial output).
/usr/bin/python3 -c "import numpy as np, sys; x = np.load(sys.argv[1]).reshape(-1, 1, 8, 8); np.save(sys.argv[2], x[:64]); np.save(sys.argv[3], x[64:128])" \
  "$m/digits_test_x.npy" "$TMP/img0.npy" "$TMP/img1.npy"
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1]).reshape(-1, 1, 8, 8))" \
  "$m/digits_calib_x.npy" "$TMP/calib.npy"
expect 0 "guard: passed: output SQNR >= 15.0 dB (--min-sqnr) on 32 held-back calibration samples: logits" -- \
  "$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" -o "$TMP/cnn.octet"
expect 0 "guard: passed" -- "$octet" inspect "$TMP/cnn.octet"
expect 0 "metadata guard:" -- "$octet" inspect "$TMP/cnn.octet"

# The guard (issue 21): 2-bit activations break the digits CNN; quantize warns naming the worst layer and the fixes
# it measured, and still writes the model (with the figures in its metadata, shown by inspect); --strict fails with
# exit 1 and writes nothing; --no-guard is silent; a calibration set of few batches is checked on itself.
out=$("$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" --activation-bits 2 -o "$TMP/broken.octet" 2>&1)
rc=$?
[ "$rc" -eq 0 ] || fail "quantize --activation-bits 2 exited $rc: $out"
for want in "warning: guard: output SQNR" "below 15.0 dB (--min-sqnr) on 32 held-back calibration samples" \
    "worst layers by shadow SQNR" "/cnn/fc/Gemm (QGemm): shadow SQNR" "--activation-observer minmax:" "--skip /cnn/"; do
  grep -qF -- "$want" <<<"$out" || fail "quantize --activation-bits 2 output lacks '$want': $out"
done
[ -f "$TMP/broken.octet" ] || fail "quantize without --strict wrote no model"
expect 0 "warning: guard: output SQNR" -- "$octet" inspect "$TMP/broken.octet"
/usr/bin/python3 - "$TMP/broken.octet" <<'PY' || fail "the .octet metadata lacks the guard's figures"
import json, re, sys
data = open(sys.argv[1], "rb").read()
start = data.index(b'{"fixes"')
guard = json.JSONDecoder().raw_decode(data[start:].decode("utf-8", "replace"))[0]
assert guard["passed"] is False and guard["min_sqnr_db"] == 15.0 and guard["samples"] == 32, guard
assert guard["samples_source"] == "held-back" and guard["outputs"][0]["name"] == "logits", guard
assert guard["worst_sqnr_db"] < 15 and guard["worst_by_shadow"], guard
assert any(f["option"] == "--activation-observer minmax" for f in guard["fixes"]), guard
PY
expect 1 "the guard failed (--strict)" -- "$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" \
  --activation-bits 2 --strict -o "$TMP/strict.octet" --onnx "$TMP/strict.onnx"
[ -e "$TMP/strict.octet" ] || [ -e "$TMP/strict.onnx" ] && fail "a failed --strict guard left an output file"
expect 1 "below 60.0 dB (--min-sqnr)" -- "$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" \
  --min-sqnr 60 --strict -o "$TMP/strict.octet"
[ -e "$TMP/strict.octet" ] && fail "a failed --strict guard left $TMP/strict.octet"
out=$("$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" --activation-bits 2 --no-guard \
  -o "$TMP/plain.octet" 2>&1) || fail "quantize --no-guard failed: $out"
grep -q "guard:" <<<"$out" && fail "quantize --no-guard mentions the guard: $out"
"$octet" inspect "$TMP/plain.octet" | grep -q "guard:" && fail "a --no-guard model has guard metadata"
expect 0 "on 256 calibration samples (too few batches to hold some back)" -- "$octet" quantize "$m/digits_cnn.onnx" \
  --calib image="$TMP/calib.npy" --calib-batch 64 -o "$TMP/small.octet"
expect 2 "--strict needs the guard" -- "$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" \
  --strict --no-guard -o "$TMP/x.octet"
expect 2 "--activation-bits must be 2..8" -- "$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" \
  --activation-bits 1 -o "$TMP/x.octet"
# Dynamic quantization: --calib feeds the guard only.
expect 0 "guard: passed" -- "$octet" quantize "$m/digits_mlp.onnx" --mode dynamic --calib x="$m/digits_mlp.input0.npy" \
  -o "$TMP/dyn.octet"
expect 0 "guard: skipped: no samples" -- "$octet" quantize "$m/digits_mlp.onnx" --mode dynamic -o "$TMP/dyn.octet"
# --skip takes scopes ('cnn/conv1' covers /cnn/conv1/Conv); one that matches nothing is an error naming it; a
# quantization that leaves every Conv/Gemm float says so (issue 21).
expect 0 "" -- "$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" --skip cnn/conv1 \
  -o "$TMP/skip.octet"
expect 2 "--skip cnn/conv9: " -- "$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" \
  --skip cnn/conv9 -o "$TMP/skip.octet"
expect 0 "warning: static quantization quantized none of the 3 Conv/Gemm/MatMul nodes" -- "$octet" quantize \
  "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" --skip cnn -o "$TMP/skip.octet"

# --equalize --bias-correction (issue 18) on the spread-range MobileNetV2: the report names the pairs and the
# corrected layers, the guard passes with per-tensor weights; usage errors name the flag.
sm="$m/spread_mobilenet_v2"
expect 0 "equalize: 12 pairs" -- "$octet" quantize "$sm.onnx" --calib image="$sm.input0.npy" --calib-batch 8 \
  --backend onednn --per-tensor --equalize --bias-correction -o "$TMP/spread.octet"
expect 0 "bias correction (empirical, 4 calibration batches): 17 layers corrected" -- "$octet" quantize "$sm.onnx" \
  --calib image="$sm.input0.npy" --calib-batch 8 --backend onednn --per-tensor --bias-correction -o "$TMP/spread.octet"
expect 0 "skipped /cnn/conv1/Conv: its input has no BatchNorm statistics" -- "$octet" quantize "$m/digits_cnn.onnx" \
  --calib image="$TMP/calib.npy" --bias-correction --bias-correction-mode analytic -o "$TMP/bc.octet"
expect 2 "--equalize, --adaround and --bias-correction apply to --mode static only" -- "$octet" quantize \
  "$m/digits_mlp.onnx" --mode dynamic --equalize -o "$TMP/dyn.octet"
# --weight-bits and --adaround (issue 18): 4-bit weights with learned rounding; the report gives each layer's
# reconstruction loss; bad values are usage errors.
# --smoothquant from the command line (issue 17): it measures the model on every calibration batch first, so the
# calibration is not streamed; the report lists the smoothed LayerNorms.
expect 0 "smoothquant (alpha 0.5): 4 LayerNorm(s) smoothed" -- "$octet" quantize "$m/outlier_encoder.onnx" \
  --calib x="$m/outlier_encoder.calib.npy" --calib-batch 1 --smoothquant -o "$TMP/smooth.octet"
expect 0 "adaround: 3 layers, 50 iterations each" -- "$octet" quantize "$m/digits_cnn.onnx" \
  --calib image="$TMP/calib.npy" --weight-bits 4 --adaround --adaround-iters 50 -o "$TMP/ada.octet"
expect 2 "--weight-bits must be 2..8, got 9" -- "$octet" quantize "$m/digits_cnn.onnx" \
  --calib image="$TMP/calib.npy" --weight-bits 9 -o "$TMP/bad.octet"
expect 2 "apply to --mode static only, got --mode dynamic" -- "$octet" quantize "$m/digits_mlp.onnx" \
  --mode dynamic --adaround -o "$TMP/dyn.octet"
expect 2 "--equalize-relu6 must be refuse or relu, got 'clip'" -- "$octet" quantize "$sm.onnx" \
  --calib image="$sm.input0.npy" --equalize --equalize-relu6 clip -o "$TMP/spread.octet"
expect 2 "--bias-correction-mode must be empirical or analytic" -- "$octet" quantize "$sm.onnx" \
  --calib image="$sm.input0.npy" --bias-correction --bias-correction-mode exact -o "$TMP/spread.octet"
# --target (issue 18): the built-in pow2-int8 target quantizes the digits CNN and its vectors replay bit for bit; a
# target file with an unknown key fails naming it; --target excludes --backend.
expect 0 "(static, target pow2-int8, reference profile)" -- "$octet" quantize "$m/digits_cnn.onnx" \
  --calib image="$TMP/calib.npy" --target pow2-int8 -o "$TMP/pow2.octet"
expect 0 "replayed bit-exactly" -- "$octet" vectors "$TMP/pow2.octet" --input image="$TMP/img0.npy" --out "$TMP/pow2v"
expect 0 "replayed bit-exactly" -- "$octet" vectors --replay "$TMP/pow2v"
echo '{"activation": {"dtype": "int8"}, "weight": {"dtype": "int8", "rounding": "up"}}' >"$TMP/bad_target.json"
expect 2 "weight.rounding: unknown key" -- "$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" \
  --target "$TMP/bad_target.json" -o "$TMP/bad.octet"
[ -e "$TMP/bad.octet" ] && fail "a refused --target wrote $TMP/bad.octet"
expect 2 "--backend excludes --target" -- "$octet" quantize "$m/digits_cnn.onnx" --calib image="$TMP/calib.npy" \
  --target pow2-int8 --backend x86 -o "$TMP/bad.octet"
expect 0 "/cnn/conv2/Conv" -- "$octet" compare "$m/digits_cnn.onnx" "$TMP/cnn.octet" --input image="$TMP/img0.npy" \
  --input image="$TMP/img1.npy" --json "$TMP/report.json" --html "$TMP/report.html"
/usr/bin/python3 - "$TMP/report.json" <<'PY' || fail "octet compare: the JSON report is not as documented"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema_version"] == 1, r["schema_version"]
assert [w["node"] for w in r["weights"]] == ["/cnn/conv1/Conv", "/cnn/conv2/Conv", "/cnn/fc/Gemm"], r["weights"]
assert all(len(w["histogram"]["float"]) == 64 for w in r["weights"])
assert [i["file"].endswith(f) for i, f in zip(r["inputs"], ["img0.npy", "img1.npy"])] == [True, True], r["inputs"]
conv = [a for a in r["activations"] if a["name"] == "/cnn/conv1/Conv"][0]
assert conv["sqnr_db"] > 25 and "accumulator_headroom_bits" in conv and "clipped_fraction" in conv, conv
assert r["outputs"][0]["name"] == "logits" and r["outputs"][0]["sqnr_db"] > 25, r["outputs"]
PY
grep -q "<svg" "$TMP/report.html" || fail "octet compare: the HTML report has no SVG chart"
grep -q '<section id="worst">' "$TMP/report.html" || fail "octet compare: the HTML report has no worst-layers table"
out=$("$octet" compare "$m/digits_cnn.onnx" "$TMP/cnn.octet" --input image="$TMP/img0.npy" 2>&1)
[ "$(grep -n '^worst 5 of 5 layers (lowest shadow SQNR):' <<<"$out" | cut -d: -f1)" = 1 ] &&
  [ "$(grep -c '^all layers:' <<<"$out")" = 1 ] || fail "octet compare does not lead with the worst layers: $out"
expect 1 "has no input named 'tokens'" -- "$octet" compare "$m/digits_cnn.onnx" "$TMP/cnn.octet" \
  --input tokens="$TMP/img0.npy" --json "$TMP/bad.json"
expect 1 "no quantized node has a float node of the same name" -- "$octet" compare "$m/digits_mlp.onnx" \
  "$TMP/cnn.octet" --input x="$m/digits_mlp.input0.npy" --json "$TMP/bad.json" --html "$TMP/bad.html"
expect 2 "" -- "$octet" compare "$m/digits_cnn.onnx" "$TMP/cnn.octet"
[ -e "$TMP/bad.json" ] || [ -e "$TMP/bad.html" ] && fail "a failed octet compare left a report behind"

# train -o MODEL.onnx: the trained float model as ONNX, which octet runs; --checkpoint adds the folder.
expect 0 "epoch 1/1" -- "$octet" train "$m/digits_cnn.onnx" --data "$TMP/tx.npy" --labels "$TMP/ty.npy" --epochs 1 \
  --lr 0.01 -o "$TMP/trained.onnx" --checkpoint "$TMP/ckpt3"
[ -f "$TMP/ckpt3/manifest.json" ] || fail "octet train --checkpoint wrote no manifest"
expect 0 "logits: f32 [32, 10]" -- "$octet" run "$TMP/trained.onnx" --input image="$m/digits_cnn.input0.npy" \
  --output-dir "$TMP/trained_run"
/usr/bin/python3 - "$m" "$TMP" <<'PY' || fail "octet train -o X.onnx did not write the trained weights"
import sys, numpy as np
m, tmp = sys.argv[1], sys.argv[2]
before = np.load("%s/digits_cnn.output0.npy" % m); after = np.load("%s/trained_run/logits.npy" % tmp)
assert after.shape == before.shape and np.isfinite(after).all() and np.abs(after - before).max() > 1e-3
PY
expect 1 "" -- "$octet" train "$m/digits_cnn.onnx" --data "$TMP/tx.npy" --labels "$m/digits_labels.npy" \
  -o "$TMP/bad.onnx"
[ -e "$TMP/bad.onnx" ] && fail "a failed octet train left $TMP/bad.onnx"

# qat: the digits CNN on 200 images for 2 epochs, then int8 (.octet and ONNX QDQ) that octet runs; usage and
# runtime errors leave no output. (The accuracy figures are the [qat] test in tests/onnx/qat_digits_test.cc.)
expect 0 "int8 test accuracy" -- "$octet" qat "$m/digits_cnn.onnx" --data "$TMP/tx.npy" --labels "$TMP/ty.npy" \
  --epochs 2 --lr 0.002 --freeze-bn-after 1 --freeze-observers-after 1 --test-data "$TMP/tx.npy" \
  --test-labels "$TMP/ty.npy" -o "$TMP/qat.octet" --onnx "$TMP/qat.onnx"
[ -f "$TMP/qat.octet" ] && [ -f "$TMP/qat.onnx" ] || fail "octet qat wrote no $TMP/qat.octet or $TMP/qat.onnx"
expect 0 "logits: f32 [32, 10]" -- "$octet" run "$TMP/qat.octet" --input image="$m/digits_cnn.input0.npy" \
  --output-dir "$TMP/qat_run"
expect 0 "epoch 1/1" -- "$octet" qat "$m/digits_cnn.onnx" --data "$TMP/tx.npy" --labels "$TMP/ty.npy" --epochs 1 \
  --weight-bits 4 --backend qnnpack --qconfig-version 0 -o "$TMP/qat4.octet"
expect 0 "learnable" -- "$octet" qat "$m/digits_cnn.onnx" --data "$TMP/tx.npy" --labels "$TMP/ty.npy" --epochs 2 \
  --learnable --convert-qparams calculate -o "$TMP/qat_lsq.octet"
[ -f "$TMP/qat_lsq.octet" ] || fail "octet qat --learnable wrote no $TMP/qat_lsq.octet"
expect 2 "--weight-quant-range" -- "$octet" qat "$m/digits_cnn.onnx" --data "$TMP/tx.npy" --labels "$TMP/ty.npy" \
  --weight-quant-range 7,-8 -o "$TMP/qat_bad.octet"
expect 2 "unknown backend" -- "$octet" qat "$m/digits_cnn.onnx" --data "$TMP/tx.npy" --labels "$TMP/ty.npy" \
  --backend nope -o "$TMP/qat_bad.octet"
expect 1 "do not match" -- "$octet" qat "$m/digits_cnn.onnx" --data "$TMP/tx.npy" --labels "$m/digits_labels.npy" \
  --qconfig-version 0 -o "$TMP/qat_bad.octet"
[ -e "$TMP/qat_bad.octet" ] && fail "a failed octet qat left $TMP/qat_bad.octet"

# ONNX's checker (Debian's python3-onnx) on the ONNX files train and qat wrote.
/usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/check_onnx_models.py" "$TMP/trained.onnx" "$TMP/qat.onnx" ||
  fail "onnx.checker rejects the ONNX files of octet train / octet qat"

test_end "octet run / inspect"
