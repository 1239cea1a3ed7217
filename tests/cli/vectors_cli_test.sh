#!/usr/bin/env bash
# End-to-end test of `octet vectors` (docs/test_vectors.md): quantize the digits CNN and MLP, write their vectors,
# replay them, catch a changed output byte, and check the exit statuses (0 ok, 1 runtime error, 2 bad usage) and that
# failures leave no folder behind. Needs bash and python3 (standard library only).
#
# Usage: vectors_cli_test.sh path/to/octet tests/data/models
set -u

OCTET=${1:?usage: vectors_cli_test.sh path/to/octet models-dir}
MODELS=${2:?usage: vectors_cli_test.sh path/to/octet models-dir}
# shellcheck source=tests/cli/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
test_begin octet_vectors_cli
unset OCTET_ISA
# expect NAME RC PATTERN -- CMD...: CMD exits RC and its stderr (RC != 0) or stdout (RC == 0) matches PATTERN.
expect() {
  local name=$1 want=$2 pattern=$3
  shift 4
  run "$@"
  local out="$TMP/stderr"
  [[ $want -eq 0 ]] && out="$TMP/stdout"
  if [[ $rc -ne $want ]]; then
    fail "$name: exit $rc, expected $want"
  elif [[ -n "$pattern" ]] && ! grep -Eq -- "$pattern" "$out"; then
    fail "$name: output does not match '$pattern': $(head -3 "$out")"
  else
    pass
  fi
}

CNN=$TMP/cnn.octet
MLP=$TMP/mlp.octet
X_CNN=$MODELS/digits_cnn.input0.npy
X_MLP=$MODELS/digits_mlp.input0.npy
expect "quantize cnn" 0 "" -- "$OCTET" quantize "$MODELS/digits_cnn.onnx" --calib "image=$X_CNN" -o "$CNN"
expect "quantize mlp (q31)" 0 "" -- "$OCTET" quantize "$MODELS/digits_mlp.onnx" --calib "x=$X_MLP" --profile tflite \
  -o "$MLP"

# Write and replay.
expect "vectors cnn" 0 "^$TMP/v: 9 nodes, [0-9]+ files, replayed bit-exactly" -- \
  "$OCTET" vectors "$CNN" --input "image=$X_CNN" --out "$TMP/v"
if [[ -f "$TMP/v/manifest.json" && -f "$TMP/v/nodes/0002_cnn_conv1_Conv/accumulator.npy" ]]; then pass; else
  fail "vectors cnn: manifest.json or conv1's accumulator.npy missing: $(ls -R "$TMP/v" | head)"
fi
expect "replay cnn" 0 "9 nodes replayed bit-exactly" -- "$OCTET" vectors --replay "$TMP/v"
expect "vectors mlp, two nodes, 2 threads" 0 ": 2 nodes" -- \
  "$OCTET" vectors "$MLP" --input "x=$X_MLP" --out "$TMP/m" --nodes /fc1/Gemm,/fc2/Gemm --threads 2
if grep -q '"scheme": "q31"' "$TMP/m/manifest.json" && [[ -f "$TMP/m/nodes/0001_fc1_Gemm/q31_shift.npy" ]]; then
  pass
else
  fail "vectors mlp: no q31 requantization recorded"
fi
expect "replay mlp" 0 "2 nodes replayed" -- "$OCTET" vectors --replay "$TMP/m"

# A changed byte in an output is caught, naming the node and the element.
python3 - "$TMP/v/nodes/0004_cnn_conv2_Conv/output0.npy" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[-1] ^= 0x01
open(path, "wb").write(bytes(data))
PY
expect "replay of a changed output" 1 "node '/cnn/conv2/Conv' \(QConv\): output 0 differs at element [0-9]+" -- \
  "$OCTET" vectors --replay "$TMP/v"

# Refusals: an occupied folder (kept as it was), bad inputs and nodes (no folder created).
expect "occupied folder" 1 "not empty" -- "$OCTET" vectors "$CNN" --input "image=$X_CNN" --out "$TMP/v"
expect "occupied folder kept" 1 "differs" -- "$OCTET" vectors --replay "$TMP/v"
expect "--force replaces it" 0 "9 nodes" -- "$OCTET" vectors "$CNN" --input "image=$X_CNN" --out "$TMP/v" --force
expect "replay after --force" 0 "9 nodes replayed" -- "$OCTET" vectors --replay "$TMP/v"
mkdir -p "$TMP/fail"
expect "unknown node" 1 "no node named 'nope'" -- \
  "$OCTET" vectors "$CNN" --input "image=$X_CNN" --out "$TMP/fail/v" --nodes /cnn/fc/Gemm,nope
expect "wrong input shape" 1 "input 'image' must have shape" -- \
  "$OCTET" vectors "$CNN" --input "image=$X_MLP" --out "$TMP/fail/v"
expect "unknown input" 1 "has no input named 'x'" -- "$OCTET" vectors "$CNN" --input "x=$X_MLP" --out "$TMP/fail/v"
expect "missing input" 1 "input 'image' of graph .* is not given" -- "$OCTET" vectors "$CNN" --out "$TMP/fail/v"
expect "float model" 1 "not a .octet model" -- \
  "$OCTET" vectors "$MODELS/digits_cnn.onnx" --input "image=$X_CNN" --out "$TMP/fail/v"
expect "unreadable input" 1 "missing.npy" -- "$OCTET" vectors "$CNN" --input "image=$TMP/missing.npy" --out "$TMP/fail/v"
if [[ -z "$(ls -A "$TMP/fail")" ]]; then pass; else fail "failures left files behind: $(ls -A "$TMP/fail")"; fi
expect "replay of nothing" 1 "manifest.json" -- "$OCTET" vectors --replay "$TMP/fail/none"
expect "usage: no model" 2 "give a model" -- "$OCTET" vectors --out "$TMP/fail/v"
expect "usage: model and --replay" 2 "" -- "$OCTET" vectors "$CNN" --replay "$TMP/v"
expect "usage: --replay with --out" 2 "takes no" -- "$OCTET" vectors --replay "$TMP/v" --out "$TMP/fail/v"
expect "usage: no --out" 2 "--out DIR is required" -- "$OCTET" vectors "$CNN" --input "image=$X_CNN"

test_end "vectors cli"
