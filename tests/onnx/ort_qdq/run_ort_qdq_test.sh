#!/usr/bin/env bash
# ONNX QDQ export checked in ONNX Runtime (issue 7): quantizes the digits models with `octet quantize ... --onnx`,
# runs each .octet model in octet and its QDQ export in onnxruntime-node 1.30 on the 360 held-out digits, and
# requires >= 99.9% of output elements within one LSB of octet's (check_qdq.js).
#
#   bash tests/onnx/ort_qdq/run_ort_qdq_test.sh OCTET_BINARY
#
# Two comparisons per model (issue 25):
# - ONNX Runtime with graph optimizations off runs each DequantizeLinear, float operator and QuantizeLinear as
#   written: the export's meaning, checked on every machine.
# - With all optimizations ONNX Runtime fuses the QDQ groups into its int8 kernels. On x86 CPUs without VNNI their
#   u8 x s8 products are added in pairs in int16 (AVX2's vpmaddubsw), which saturates unless the activations are
#   7-bit (the x86 preset's reduce_range): there they disagree with the export by tens of LSB. So this comparison is
#   required only where it is exact (the CPU has AVX-512 VNNI or AVX-VNNI, from /proc/cpuinfo, or the model's
#   activations are 7-bit); elsewhere its figures are printed but not required, and the script says why.
# Each export must also pass ONNX's checker (../check_onnx_models.py, Debian's python3-onnx), and `octet quantize`
# must warn about the saturation exactly for the models with 8-bit activations.
#
# Environment: OCTET_ORT_VNNI=yes|no overrides the CPU's VNNI flags; OCTET_ORT_NODE replaces `node` (for example
# "qemu-x86_64 -cpu Haswell-noTSX /usr/bin/node" with OCTET_ORT_VNNI=no runs ONNX Runtime on an emulated
# AVX2-only CPU).
#
# onnxruntime-node is installed from the npm registry with ONNXRUNTIME_NODE_INSTALL=skip (its bundled CPU build,
# no CUDA download) into $OCTET_ORT_DIR (default ~/.cache/octet/onnxruntime-node-1.30), once (ort_env.sh).
set -euo pipefail
octet=$(realpath "$1")
read -r -a node_cmd <<<"${OCTET_ORT_NODE:-node}"

# shellcheck source=tests/onnx/ort_qdq/ort_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/ort_env.sh"

# Whether ONNX Runtime's int8 kernels here have VNNI (exact u8 x s8 dot products).
vnni=${OCTET_ORT_VNNI:-}
if [ -z "$vnni" ]; then
  vnni=no
  if [ "$(uname -m)" = x86_64 ] && grep -qwE 'avx512_vnni|avx_vnni' /proc/cpuinfo 2>/dev/null; then vnni=yes; fi
fi
case "$vnni" in
  yes) echo "CPU: x86 with VNNI (avx512_vnni or avx_vnni): ONNX Runtime's fused int8 kernels are exact here" ;;
  no) echo "CPU: no VNNI (or not x86): ONNX Runtime's fused u8 x s8 kernels are exact only for 7-bit activations" ;;
  *) echo "FAILED: OCTET_ORT_VNNI must be yes or no, got '$vnni'"; exit 1 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$here/npy.js" reshape "$models/digits_calib_x.npy" "$work/calib_images.npy" 256,1,8,8
node "$here/npy.js" reshape "$models/digits_test_x.npy" "$work/test_images.npy" 360,1,8,8

status=0
summary=()
check() {  # NAME ACTIVATION_BITS MODEL INPUT_NAME CALIB TEST [quantize options...]
  local name=$1 bits=$2 model=$3 input=$4 calib=$5 test=$6
  shift 6
  echo "---- $name ($bits-bit activations): octet quantize $(basename "$model") $*"
  "$octet" quantize "$model" --calib "$input=$calib" -o "$work/$name.octet" --onnx "$work/$name.onnx" "$@" \
    >/dev/null 2>"$work/$name.stderr"
  cat "$work/$name.stderr"
  # The saturation warning: exactly for 8-bit activations, one line.
  local warned=no
  grep -q "warning: .*without VNNI" "$work/$name.stderr" && warned=yes
  if [ "$warned" != "$([ "$bits" = 8 ] && echo yes || echo no)" ]; then
    echo "FAILED: $name: octet quantize --onnx warned about ONNX Runtime's saturation: $warned, expected for" \
         "$bits-bit activations: $([ "$bits" = 8 ] && echo yes || echo no)"
    status=1
  else
    echo "  octet's saturation warning: $warned (as expected for $bits-bit activations)"
  fi
  /usr/bin/python3 "$here/../check_onnx_models.py" "$work/$name.onnx" | sed 's/^/  /' || status=1
  "$octet" run "$work/$name.octet" --input "$input=$test" --output-dir "$work/$name.out" >/dev/null
  local optimized=report why
  if [ "$vnni" = yes ]; then
    optimized=require why="required: the CPU has VNNI"
  elif [ "$bits" = 7 ]; then
    optimized=require why="required: 7-bit activations do not saturate"
  else
    why="not required: no VNNI and 8-bit activations, so ONNX Runtime's kernels saturate"
  fi
  echo "  comparisons: optimizations off: required (always); optimizations on: $why"
  if ! "${node_cmd[@]}" "$here/check_qdq.js" "$work/$name.onnx" "$work/$name.out" "$input=$test" \
       --optimized "$optimized"; then
    echo "FAILED: $name: ONNX Runtime's outputs (check_qdq.js, run by '${node_cmd[*]}')"
    status=1
  fi
  if [ "$optimized" = require ]; then
    summary+=("$name: optimizations off: checked; optimizations on: checked")
  else
    summary+=("$name: optimizations off: checked; optimizations on: skipped (no VNNI, 8-bit activations; figures only)")
  fi
}

check cnn_x86 7 "$models/digits_cnn.onnx" image "$work/calib_images.npy" "$work/test_images.npy" \
  --mode static --backend x86
# The same without the dense stem (the stem as QLinearConv's group, io/onnx/dense_stem.h): both forms are checked.
check cnn_x86_conv_stem 7 "$models/digits_cnn.onnx" image "$work/calib_images.npy" "$work/test_images.npy" \
  --mode static --backend x86 --no-dense-stem
check cnn_onednn_minmax 8 "$models/digits_cnn.onnx" image "$work/calib_images.npy" "$work/test_images.npy" \
  --mode static --backend onednn --activation-observer MinMaxObserver
check cnn_qnnpack_per_tensor 8 "$models/digits_cnn.onnx" image "$work/calib_images.npy" "$work/test_images.npy" \
  --mode static --backend qnnpack --profile pytorch-qnnpack
check mlp_symmetric 8 "$models/digits_mlp.onnx" x "$models/digits_calib_x.npy" "$models/digits_test_x.npy" \
  --mode static --backend symmetric

echo "---- summary (VNNI: $vnni)"
printf '  %s\n' "${summary[@]}"
if [ $status -ne 0 ]; then
  echo "FAILED: see the lines above (ONNX Runtime disagreeing by more than one LSB, onnx.checker, or the warning)"
  exit 1
fi
echo "ONNX Runtime QDQ checks passed"
