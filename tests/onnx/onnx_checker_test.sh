#!/usr/bin/env bash
# ONNX's reference checker (onnx.checker.check_model, full_check, Debian's python3-onnx) on the QDQ exports the tests
# make: those of octet_tests' [qdq] cases (tests/onnx/qdq_export_test.cc, written to OCTET_QDQ_EXPORT_DIR) and
# `octet quantize --onnx` of the digits models with every backend preset and mode. Also checks the warning
# `octet quantize --onnx` prints about ONNX Runtime's saturating int8 kernels on CPUs without VNNI: one stderr line,
# exit 0, for the presets with 8-bit activations, none for the x86 and fbgemm presets (7-bit) or dynamic and
# weight-only models. (The onnx_ort test checks its own exports too, and run_command_test.sh those of train and qat.)
#
# Usage: onnx_checker_test.sh OCTET_TESTS OCTET MODELS_DIR
set -uo pipefail
octet_tests=$1
octet=$2
m=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/octet-onnx-checker.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

mkdir -p "$tmp/cc"
OCTET_QDQ_EXPORT_DIR="$tmp/cc" "$octet_tests" "[qdq]" >"$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log"; fail "octet_tests [qdq]"; }
n=$(find "$tmp/cc" -name '*.onnx' | wc -l)
[ "$n" -ge 3 ] || fail "octet_tests [qdq] wrote $n exports to OCTET_QDQ_EXPORT_DIR, expected at least 3"

/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:64].reshape(-1, 1, 8, 8))" \
  "$m/digits_calib_x.npy" "$tmp/calib_images.npy" || fail "cannot write the calibration images"

# quantize NAME WARNS MODEL [options...]: exit 0, the export written, and the warning exactly when WARNS is yes.
quantize() {
  local name=$1 warns=$2 model=$3
  shift 3
  if ! "$octet" quantize "$model" -o "$tmp/$name.octet" --onnx "$tmp/$name.onnx" "$@" >"$tmp/$name.out" \
       2>"$tmp/$name.err"; then
    fail "octet quantize for $name exited non-zero: $(cat "$tmp/$name.err")"
    return
  fi
  local lines
  lines=$(grep -c "warning: .*ONNX Runtime on x86 CPUs without VNNI" "$tmp/$name.err")
  if [ "$warns" = yes ]; then
    [ "$lines" -eq 1 ] && [ "$(wc -l <"$tmp/$name.err")" -eq 1 ] ||
      fail "$name: expected one warning line about ONNX Runtime without VNNI on stderr, got: $(cat "$tmp/$name.err")"
    grep -q -- "--backend x86" "$tmp/$name.err" || fail "$name: the warning does not name --backend x86"
  else
    [ -s "$tmp/$name.err" ] && fail "$name: expected nothing on stderr, got: $(cat "$tmp/$name.err")"
  fi
  echo "$name: saturation warning: $warns (as expected)"
}
cnn=(--mode static --calib image="$tmp/calib_images.npy")
quantize cnn_x86 no "$m/digits_cnn.onnx" "${cnn[@]}" --backend x86
quantize cnn_fbgemm no "$m/digits_cnn.onnx" "${cnn[@]}" --backend fbgemm
quantize cnn_onednn yes "$m/digits_cnn.onnx" "${cnn[@]}" --backend onednn
quantize cnn_qnnpack yes "$m/digits_cnn.onnx" "${cnn[@]}" --backend qnnpack --profile pytorch-qnnpack
quantize cnn_symmetric yes "$m/digits_cnn.onnx" "${cnn[@]}" --backend symmetric
quantize mlp_x86 no "$m/digits_mlp.onnx" --mode static --calib x="$m/digits_calib_x.npy" --backend x86
quantize mlp_onednn yes "$m/digits_mlp.onnx" --mode static --calib x="$m/digits_calib_x.npy" --backend onednn
quantize mlp_dynamic no "$m/digits_mlp.onnx" --mode dynamic
quantize mlp_weight_only no "$m/digits_mlp.onnx" --mode weight-only
quantize lstm_dynamic no "$m/lstm_lm.onnx" --mode dynamic

/usr/bin/python3 "$here/check_onnx_models.py" "$tmp"/cc/*.onnx "$tmp"/*.onnx || fail "onnx.checker rejects an export"

if [ "$failures" -ne 0 ]; then
  echo "FAILED: $failures check(s)"
  exit 1
fi
echo "onnx.checker: every QDQ export passed"
