#!/usr/bin/env bash
# The minimal runtime (io/runtime, tools/octet-runner) end to end: the runner links no ONNX or protobuf (neither as
# a shared library nor as symbols), runs .octet models with the expected outputs (bit-identical to `octet run` where
# the build has it), and fails with exit 1 naming the file (2 on bad usage) and no output on failure.
# Usage: runner_test.sh OCTET_RUNNER OCTET_SEEDS_DIR [OCTET]
set -uo pipefail
runner=$1
seeds=$2
octet=${3:-}
# shellcheck source=tests/cli/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/test_lib.sh"
test_begin octet-runner-test

# The link: no shared protobuf/onnx library, and no onnx or protobuf code linked in statically.
libs=$(ldd "$runner" 2>&1) || fail "ldd $runner: $libs"
if grep -Eiq 'protobuf|onnx' <<<"$libs"; then fail "octet-runner links $(grep -Ei 'protobuf|onnx' <<<"$libs")"; fi
symbols=$(nm -C "$runner" 2>&1) || fail "nm $runner: $symbols"
[ "$(wc -l <<<"$symbols")" -gt 100 ] || fail "nm found too few symbols in $runner to judge its link"
if grep -Eq 'google::protobuf|onnx::|OnnxModel' <<<"$symbols"; then
  fail "octet-runner contains ONNX/protobuf code: $(grep -Em3 'google::protobuf|onnx::|OnnxModel' <<<"$symbols")"
fi

/usr/bin/python3 - "$TMP" <<'PY'
import sys, numpy as np
np.save(sys.argv[1] + "/x22.npy", np.array([[1, 2], [-3, 0.25]], np.float32))
np.save(sys.argv[1] + "/x34.npy", (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 3)
PY
expect_output 0 "y: f32 [2, 2] -> $TMP/min/y.npy" -- "$runner" "$seeds/minimal.octet" "$TMP/min" x="$TMP/x22.npy"
/usr/bin/python3 - "$TMP" <<'PY' || fail "minimal.octet: wrong output"
import sys, numpy as np
y = np.load(sys.argv[1] + "/min/y.npy")
assert y.dtype == np.float32 and (y == np.array([[2.5, 0], [-1.5, -1.75]], np.float32)).all(), y
PY
expect_output 0 "logits: f32 [3, 2]" -- "$runner" "$seeds/mlp.octet" "$TMP/mlp" x="$TMP/x34.npy"
/usr/bin/python3 - "$TMP" "$seeds" <<'PY' || fail "mlp.octet: output differs from numpy"
import sys, numpy as np
x = np.load(sys.argv[1] + "/x34.npy")
w1 = ((np.arange(12) % 5 - 2) * 0.25).reshape(3, 4).astype(np.float32)
b1 = np.array([0.1, -0.2, 0.3], np.float32)
w2 = np.array([0.5, -1.0, 0.25, 1.0, 0.75, -0.5], np.float32).reshape(2, 3)
b2 = np.array([0.0, 0.125], np.float32)
want = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
got = np.load(sys.argv[1] + "/mlp/logits.npy")
assert got.shape == (3, 2) and np.abs(got - want).max() < 1e-5 and np.abs(want).max() > 0.1, (got, want)
PY
if [ -n "$octet" ]; then
  expect_output 0 "" -- "$octet" run "$seeds/mlp.octet" --input x="$TMP/x34.npy" --output-dir "$TMP/mlp_octet"
  cmp -s "$TMP/mlp/logits.npy" "$TMP/mlp_octet/logits.npy" || fail "octet-runner and octet run differ on mlp.octet"
fi

expect_output 1 "newer_version.octet': format version 2 is newer" -- "$runner" "$seeds/newer_version.octet" "$TMP/x" \
  x="$TMP/x22.npy"
expect_output 1 \
  "failed to load .octet model '$seeds/minimal.octet': failed to compile graph 'minimal': a shape is given" -- \
  "$runner" "$seeds/minimal.octet" "$TMP/x" y="$TMP/x22.npy"
expect_output 1 "no_such.octet" -- "$runner" "$TMP/no_such.octet" "$TMP/x" x="$TMP/x22.npy"
expect_output 2 "usage" -- "$runner" "$seeds/minimal.octet"
expect_output 2 "NAME=FILE.npy" -- "$runner" "$seeds/minimal.octet" "$TMP/x" "$TMP/x22.npy"
[ ! -e "$TMP/x" ] || fail "a failed run created its output folder"

test_end "runner_test"
