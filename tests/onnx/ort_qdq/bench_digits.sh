#!/usr/bin/env bash
# ONNX Runtime's speed on octet's digits-CNN exports against its own float (issue 23): quantizes the digits CNN with
# every static preset, writes each export with its dense stem (the default) and without (--no-dense-stem), and
# times them all with the float model in interleaved rounds at 1 thread (bench_forms.js), at batch 1 and 32. Prints
# each model's median and its speed over the float's ("Nx the first"); no test depends on the figures.
#
#   bash tests/onnx/ort_qdq/bench_digits.sh OCTET_BINARY [ROUNDS]
set -euo pipefail
octet=$(realpath "$1")
rounds=${2:-15}

# shellcheck source=tests/onnx/ort_qdq/ort_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/ort_env.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:32].reshape(-1, 1, 8, 8))" \
  "$models/digits_calib_x.npy" "$work/images.npy"

exports=()
for preset in "x86" "fbgemm" "onednn" "qnnpack --profile pytorch-qnnpack" "symmetric"; do
  tag=${preset%% *}
  # shellcheck disable=SC2086  # the preset's words are options
  "$octet" quantize "$models/digits_cnn.onnx" --mode static --calib "image=$work/images.npy" --no-guard \
    --backend $preset -o "$work/$tag.octet" --onnx "$work/$tag.dense.onnx" >/dev/null 2>&1
  # shellcheck disable=SC2086
  "$octet" quantize "$models/digits_cnn.onnx" --mode static --calib "image=$work/images.npy" --no-guard \
    --backend $preset -o "$work/$tag.octet" --onnx "$work/$tag.conv.onnx" --no-dense-stem >/dev/null 2>&1
  exports+=("$work/$tag.dense.onnx" "$work/$tag.conv.onnx")
done
for batch in 1 32; do
  (cd "$work" && node "$here/bench_forms.js" images.npy "$batch" "$rounds" "$models/digits_cnn.onnx" \
     "${exports[@]/#$work\//}") | sed "s|$models/||"
done
