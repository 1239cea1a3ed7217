#!/usr/bin/env bash
# ONNX QDQ export checked in ONNX Runtime (issue 7): quantizes the digits models with `octet quantize ... --onnx`,
# runs each .octet model in octet and its QDQ export in onnxruntime-node 1.30 on the 360 held-out digits, and
# requires >= 99.9% of output elements within one LSB of octet's (check_qdq.js).
#
#   bash tests/onnx/ort_qdq/run_ort_qdq_test.sh OCTET_BINARY
#
# onnxruntime-node is installed from the npm registry with ONNXRUNTIME_NODE_INSTALL=skip (its bundled CPU build,
# no CUDA download) into $OCTET_ORT_DIR (default ~/.cache/octet/onnxruntime-node-1.30), once.
set -euo pipefail
octet=$(realpath "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
models="$here/../../data/models"
ort_dir=${OCTET_ORT_DIR:-$HOME/.cache/octet/onnxruntime-node-1.30}

if [ ! -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]; then
  echo "installing onnxruntime-node 1.30 into $ort_dir"
  mkdir -p "$ort_dir"
  (cd "$ort_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save --no-audit --no-fund --loglevel=error \
     onnxruntime-node@1.30.0)
fi
export NODE_PATH="$ort_dir/node_modules"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$here/npy.js" reshape "$models/digits_calib_x.npy" "$work/calib_images.npy" 256,1,8,8
node "$here/npy.js" reshape "$models/digits_test_x.npy" "$work/test_images.npy" 360,1,8,8

status=0
check() {  # NAME MODEL INPUT_NAME CALIB TEST [quantize options...]
  local name=$1 model=$2 input=$3 calib=$4 test=$5
  shift 5
  echo "---- $name: octet quantize $(basename "$model") $*"
  "$octet" quantize "$model" --calib "$input=$calib" -o "$work/$name.octet" --onnx "$work/$name.onnx" "$@" >/dev/null
  "$octet" run "$work/$name.octet" --input "$input=$test" --output-dir "$work/$name.out" >/dev/null
  node "$here/check_qdq.js" "$work/$name.onnx" "$work/$name.out" "$input=$test" || status=1
}

check cnn_x86 "$models/digits_cnn.onnx" image "$work/calib_images.npy" "$work/test_images.npy" \
  --mode static --backend x86
check cnn_onednn_minmax "$models/digits_cnn.onnx" image "$work/calib_images.npy" "$work/test_images.npy" \
  --mode static --backend onednn --activation-observer MinMaxObserver
check cnn_qnnpack_per_tensor "$models/digits_cnn.onnx" image "$work/calib_images.npy" "$work/test_images.npy" \
  --mode static --backend qnnpack --profile pytorch-qnnpack
check mlp_symmetric "$models/digits_mlp.onnx" x "$models/digits_calib_x.npy" "$models/digits_test_x.npy" \
  --mode static --backend symmetric

if [ $status -ne 0 ]; then
  echo "FAILED: ONNX Runtime disagrees with octet by more than one LSB too often"
  exit 1
fi
echo "ONNX Runtime QDQ checks passed"
