#!/usr/bin/env bash
# Round trip through ONNX (issue 23): `octet quantize --onnx` writes a model's int8 graph as QDQ; importing that
# file back (io/onnx/qdq_import.h) must give the same int8 graph (the same operators, counted by `octet inspect`, and
# the same qparams on every integer value), bit-identical outputs (the .npy files `octet run` writes are compared
# byte for byte: dequantized with equal qparams, so equal integers), and the same `octet compare` report against the
# float original. Presets of every backend with the reference numerics profile (fp32 requantization, int32 bias:
# what QDQ expresses; the pytorch-fbgemm profile's float bias added before the multiply and tflite's q31 have no QDQ
# form, and import as fp32).
# Usage: qdq_roundtrip_test.sh OCTET MODELS_DIR
set -uo pipefail
octet=$1
m=$2
# shellcheck source=tests/cli/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/test_lib.sh"
test_begin octet-qdq-roundtrip

/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1]).reshape(-1, 1, 8, 8))" \
  "$m/digits_calib_x.npy" "$TMP/calib_images.npy" || exit 77
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:200])" \
  "$m/digits_test_x.npy" "$TMP/test_mlp.npy"
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:200].reshape(-1, 1, 8, 8))" \
  "$m/digits_test_x.npy" "$TMP/test_images.npy"

ops() { "$octet" inspect "$1" | grep '^ops: '; }

check() {  # NAME MODEL INPUT CALIB TEST [quantize options...]
  local name=$1 model=$2 input=$3 calib=$4 test=$5
  shift 5
  if ! "$octet" quantize "$model" --calib "$input=$calib" -o "$TMP/$name.octet" --onnx "$TMP/$name.onnx" "$@" \
       >"$TMP/$name.log" 2>&1; then
    fail "$name: octet quantize $*: $(cat "$TMP/$name.log")"
    return
  fi
  local a b before=$failed
  # The digits CNN's stem goes out as its dense Gemm (io/onnx/dense_stem.h) unless --no-dense-stem: the round trip
  # then covers the import rule that folds it back into the QConv.
  if [[ $name == cnn_* ]]; then
    local want=yes have=no
    [[ " $* " == *" --no-dense-stem "* ]] && want=no
    grep -qa 'octet_dense_stem_' "$TMP/$name.onnx" && have=yes
    [ "$want" = "$have" ] || fail "$name: dense-stem Gemm in the export: $have, expected $want"
  fi
  a=$(ops "$TMP/$name.octet")
  b=$(ops "$TMP/$name.onnx")
  [ "$a" = "$b" ] || fail "$name: the imported QDQ graph differs: .octet has '$a', the ONNX import '$b'"
  # The qparams of every integer value (activations, weights, biases), as `octet inspect` prints them. ONNX has no
  # field for a weight's narrowed quant range: symmetric weights of [-127, 127] (the symmetric preset) come back
  # as [-128, 127], which changes no output (the codes are constants); that one difference is allowed, and so is
  # the x86 preset's [-64, 63] (quant/qconfig.h).
  local narrow='s/symmetric s8 \[-127, 127\]/symmetric s8 [-128, 127]/;s/symmetric s8 \[-64, 63\]/symmetric s8 [-128, 127]/'
  # Likewise a float constant quantized as an operand of QAdd / QMul (a bias added by Add) keeps its codes but not
  # a reduced u8 range [0, 127]: QDQ_LOOSE_CONSTANT_RANGES=1 (the transformer) compares every u8 [0, 127] as
  # [0, 255] on both sides, so for that model the activations' reduced ranges are checked by its outputs only.
  [ "${QDQ_LOOSE_CONSTANT_RANGES:-0}" = 1 ] && narrow="$narrow;s/affine u8 \[0, 127\]/affine u8 [0, 255]/"
  # The export writes s8 activations as u8 with zero point and range + 128 (what ONNX Runtime's int8 kernels take):
  # the same real values, and the import keeps them u8, since a u8 tensor in an ONNX file may as well be a native u8
  # activation. Octet's int8 kernels take either and compute the same numbers from them, so "the same graph" here
  # counts a per-tensor affine s8 value and its u8 shift as one (both sides written as u8); that the numbers are
  # the same is checked below, by the outputs byte for byte and by the `octet compare` report.
  local shift='s/per_tensor_affine s8 \[(-?\d+), (-?\d+)\] scale (\S+) zero_point (-?\d+)/'
  shift+='sprintf("per_tensor_affine u8 [%d, %d] scale %s zero_point %d", $1 + 128, $2 + 128, $3, $4 + 128)/e'
  if ! diff <("$octet" inspect "$TMP/$name.octet" | grep ' qparams ' | sed "$narrow" | perl -pe "$shift" | sort) \
            <("$octet" inspect "$TMP/$name.onnx" | grep ' qparams ' | sed "$narrow" | perl -pe "$shift" | sort) \
            >"$TMP/$name.qparams.diff"; then
    fail "$name: qparams differ between the .octet model (<) and its QDQ export imported back (>):" \
         "$(head -c 2000 "$TMP/$name.qparams.diff")"
  fi
  "$octet" run "$TMP/$name.octet" --input "$input=$test" --output-dir "$TMP/$name.octet.out" >/dev/null ||
    fail "$name: octet run of the .octet model"
  if ! "$octet" run "$TMP/$name.onnx" --input "$input=$test" --output-dir "$TMP/$name.onnx.out" \
       >"$TMP/$name.run" 2>&1; then
    fail "$name: octet run of the QDQ export: $(cat "$TMP/$name.run")"
    return
  fi
  local n=0
  for f in "$TMP/$name.octet.out"/*.npy; do
    n=$((n + 1))
    cmp -s "$f" "$TMP/$name.onnx.out/$(basename "$f")" ||
      fail "$name: output $(basename "$f") differs between the .octet model and its QDQ export imported back"
  done
  [ "$n" -gt 0 ] || fail "$name: no outputs written"
  # `octet compare` with the float original: the imported model's report is the .octet model's, figure for figure.
  "$octet" compare "$model" "$TMP/$name.octet" --input "$input=$test" >"$TMP/$name.cmp.octet" 2>&1 ||
    fail "$name: octet compare with the .octet model: $(cat "$TMP/$name.cmp.octet")"
  "$octet" compare "$model" "$TMP/$name.onnx" --input "$input=$test" >"$TMP/$name.cmp.onnx" 2>&1 ||
    fail "$name: octet compare with the imported QDQ model: $(cat "$TMP/$name.cmp.onnx")"
  cmp -s "$TMP/$name.cmp.octet" "$TMP/$name.cmp.onnx" ||
    fail "$name: octet compare reports differ: $(diff "$TMP/$name.cmp.octet" "$TMP/$name.cmp.onnx" | head -20)"
  [ "$failed" -eq "$before" ] && echo "ok: $name: $a; $n output(s) bit-identical"
}

check cnn_x86 "$m/digits_cnn.onnx" image "$TMP/calib_images.npy" "$TMP/test_images.npy" --backend x86
check cnn_onednn "$m/digits_cnn.onnx" image "$TMP/calib_images.npy" "$TMP/test_images.npy" --backend onednn
check cnn_qnnpack "$m/digits_cnn.onnx" image "$TMP/calib_images.npy" "$TMP/test_images.npy" --backend qnnpack
check cnn_symmetric "$m/digits_cnn.onnx" image "$TMP/calib_images.npy" "$TMP/test_images.npy" --backend symmetric
check cnn_fbgemm_conv_stem "$m/digits_cnn.onnx" image "$TMP/calib_images.npy" "$TMP/test_images.npy" \
  --backend fbgemm --no-dense-stem
check mlp_x86 "$m/digits_mlp.onnx" x "$m/digits_calib_x.npy" "$TMP/test_mlp.npy" --backend x86
check mlp_qnnpack "$m/digits_mlp.onnx" x "$m/digits_calib_x.npy" "$TMP/test_mlp.npy" --backend qnnpack
# Grouped, dilated and depthwise convolutions, fused clamps, HardSwish / Sigmoid / LeakyRelu / Tanh lookups, pools and
# float islands (ConvTranspose, Pad); and a transformer block (QMatMul, QAdd, QMul, QLayerNorm, QBatchMatMul,
# QSoftmax, the GELU QLookup: the export writes LayerNorm and GELU as opset-13 arithmetic, fused back at import).
check convs_x86 "$m/convs.onnx" x "$m/convs.input0.npy" "$m/convs.input0.npy" --backend x86
QDQ_LOOSE_CONSTANT_RANGES=1 check transformer "$m/transformer13.onnx" x "$m/transformer13.input0.npy" \
  "$m/transformer13.input0.npy"

# A QDQ model made elsewhere (ONNX Runtime's layout, tests/data/models/make_quantized.py): `octet inspect` shows the
# imported groups and qparams; `octet vectors` writes test vectors for it that replay bit-exactly.
q=$m/quantized
out=$("$octet" inspect "$q/qdq_cnn.onnx" 2>&1) || fail "octet inspect qdq_cnn.onnx: $out"
grep -qF "7 QDQ group(s) imported as int8 operators" <<<"$out" ||
  fail "octet inspect qdq_cnn.onnx: no group count: $out"
grep -qF "conv1_w_quantized qparams per_channel_symmetric s8" <<<"$out" ||
  fail "octet inspect qdq_cnn.onnx: no weight qparams: $out"
if "$octet" vectors "$q/qdq_cnn.onnx" --input "x=$q/qdq_cnn.input0.npy" --out "$TMP/vectors" >"$TMP/vectors.log" 2>&1 &&
   "$octet" vectors --replay "$TMP/vectors" >>"$TMP/vectors.log" 2>&1; then
  echo "ok: qdq_cnn: $(tail -1 "$TMP/vectors.log")"
else
  fail "octet vectors of the imported qdq_cnn.onnx: $(cat "$TMP/vectors.log")"
fi

test_end "QDQ round trip"
