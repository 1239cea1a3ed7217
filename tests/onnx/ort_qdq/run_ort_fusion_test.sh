#!/usr/bin/env bash
# Whether ONNX Runtime runs octet's QDQ exports at int8 (issue 23): quantizes the test models with every static
# backend preset (`octet quantize --onnx`), has onnxruntime-node 1.30 write the graph it optimizes each export into
# (optimize_model.js, the session option optimizedModelFilePath) and fails when an int8 Conv / MatMul / Gemm group
# of the export stayed float there (ort_fusion_check.py). Also checks each export with ONNX's checker, and its
# meaning: ONNX Runtime with graph optimizations off within one LSB of `octet run` on the calibration input
# (check_qdq.js; its figures with optimizations on are printed, not required: see run_ort_qdq_test.sh). The digits
# CNN's export must hold its stem in the dense-stem form (one Gemm; io/onnx/dense_stem.h).
#
#   bash tests/onnx/ort_qdq/run_ort_fusion_test.sh OCTET_BINARY
#
# Models: the digits CNN and MLP, the transformers (opset 13, and 17 with LayerNormalization) and the convs model of
# tests/data/models, and ResNet-18 and MobileNetV2
# when they are in $OCTET_LARGE_MODELS (default /tmp/octet_large_models; tests/data/models/generate.py --large DIR
# writes them), skipped with a line saying so otherwise. onnxruntime-node is installed by ort_env.sh.
set -euo pipefail
octet=$(realpath "$1")
large=${OCTET_LARGE_MODELS:-/tmp/octet_large_models}

# shellcheck source=tests/onnx/ort_qdq/ort_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/ort_env.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:32].reshape(-1, 1, 8, 8))" \
  "$models/digits_calib_x.npy" "$work/digits_images.npy"

presets=("x86" "fbgemm" "onednn" "qnnpack --profile pytorch-qnnpack" "symmetric")
failures=0
checked=0

# check NAME MODEL INPUT=CALIB.npy: every preset.
check() {
  local name=$1 model=$2 calib=$3 preset
  for preset in "${presets[@]}"; do
    local tag="${name}_${preset%% *}"
    # shellcheck disable=SC2086  # the preset's words are options
    if ! "$octet" quantize "$model" --mode static --calib "$calib" --no-guard --backend $preset \
         -o "$work/$tag.octet" --onnx "$work/$tag.onnx" >/dev/null 2>"$work/$tag.err"; then
      echo "FAILED: $tag: octet quantize --backend $preset: $(grep -v 'warning:' "$work/$tag.err" | head -3)"
      failures=$((failures + 1))
      continue
    fi
    if ! node "$here/optimize_model.js" "$work/$tag.onnx" "$work/$tag.optimized.onnx" 2>"$work/$tag.ort.err"; then
      echo "FAILED: $tag: ONNX Runtime did not load the export: $(grep -v 'Serializing optimized' "$work/$tag.ort.err")"
      failures=$((failures + 1))
      continue
    fi
    /usr/bin/python3 "$here/../check_onnx_models.py" "$work/$tag.onnx" >/dev/null ||
      { echo "FAILED: $tag: onnx.checker rejects the export"; failures=$((failures + 1)); }
    # The digits CNN's stem (one input channel, 8x8) must go out as its dense Gemm (io/onnx/dense_stem.h): the form
    # ONNX Runtime runs faster than its float; the fusion check below then requires that Gemm to become a QGemm.
    if [ "$name" = digits_cnn ] && ! /usr/bin/python3 -c "import onnx, sys; sys.exit(not any(
        '.octet_dense_stem_' in n.name for n in onnx.load(sys.argv[1]).graph.node if n.op_type == 'Gemm'))" \
        "$work/$tag.onnx"; then
      echo "FAILED: $tag: the export has no dense-stem Gemm for the one-input-channel Conv"
      failures=$((failures + 1))
    fi
    echo -n "--backend ${preset}: "
    /usr/bin/python3 "$here/ort_fusion_check.py" "$work/$tag.onnx" "$work/$tag.optimized.onnx" ||
      failures=$((failures + 1))
    "$octet" run "$work/$tag.octet" --input "$calib" --output-dir "$work/$tag.out" >/dev/null
    if ! node "$here/check_qdq.js" "$work/$tag.onnx" "$work/$tag.out" "$calib" --optimized report \
         >"$work/$tag.meaning" 2>&1; then
      cat "$work/$tag.meaning"
      echo "FAILED: $tag: ONNX Runtime (optimizations off) disagrees with octet run"
      failures=$((failures + 1))
    fi
    grep 'optimizations off' "$work/$tag.meaning" || true
    checked=$((checked + 1))
    rm -rf "$work/$tag".*
  done
}

check digits_cnn "$models/digits_cnn.onnx" "image=$work/digits_images.npy"
check digits_mlp "$models/digits_mlp.onnx" "x=$models/digits_calib_x.npy"
check transformer13 "$models/transformer13.onnx" "x=$models/transformer13.input0.npy"
check transformer "$models/transformer.onnx" "x=$models/transformer.input0.npy"
check convs "$models/convs.onnx" "x=$models/convs.input0.npy"
if [ -f "$large/resnet18.onnx" ] && [ -f "$large/mobilenet_v2.onnx" ]; then
  for name in resnet18 mobilenet_v2; do
    input=$(/usr/bin/python3 -c "import onnx, sys; print(onnx.load(sys.argv[1]).graph.input[0].name)" \
            "$large/$name.onnx")
    check "$name" "$large/$name.onnx" "$input=$large/$name.input0.npy"
  done
else
  echo "skipped: ResNet-18 and MobileNetV2 (not in $large; tests/data/models/generate.py --large $large writes them)"
fi

if [ "$failures" -ne 0 ]; then
  echo "FAILED: $failures of $checked export(s) (see the lines above)"
  exit 1
fi
echo "ONNX Runtime fused every int8 Conv/MatMul/Gemm group of $checked export(s)"
