#!/usr/bin/env bash
# The minimal runtime (io/runtime, tools/octet-runner) end to end: the runner links no ONNX or protobuf (neither as
# a shared library nor as symbols), runs .octet models with the expected outputs (bit-identical to `octet run` where
# the build has it), and fails with exit 1 naming the file (2 on bad usage) and no output on failure.
# Usage: runner_test.sh OCTET_RUNNER OCTET_SEEDS_DIR [OCTET]
set -uo pipefail
runner=$1
seeds=$2
octet=${3:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/octet-runner-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# The link: no shared protobuf/onnx library, and no onnx or protobuf code linked in statically.
libs=$(ldd "$runner" 2>&1) || fail "ldd $runner: $libs"
if grep -Eiq 'protobuf|onnx' <<<"$libs"; then fail "octet-runner links $(grep -Ei 'protobuf|onnx' <<<"$libs")"; fi
symbols=$(nm -C "$runner" 2>&1) || fail "nm $runner: $symbols"
[ "$(wc -l <<<"$symbols")" -gt 100 ] || fail "nm found too few symbols in $runner to judge its link"
if grep -Eq 'google::protobuf|onnx::|OnnxModel' <<<"$symbols"; then
  fail "octet-runner contains ONNX/protobuf code: $(grep -Em3 'google::protobuf|onnx::|OnnxModel' <<<"$symbols")"
fi

# expect STATUS PATTERN -- command...: the exit status, and PATTERN (fixed string) in stdout+stderr.
expect() {
  local want=$1 pattern=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, expected $want: $out"
  [ -z "$pattern" ] || grep -qF -- "$pattern" <<<"$out" || fail "'$*' output lacks '$pattern': $out"
}

/usr/bin/python3 - "$tmp" <<'PY'
import sys, numpy as np
np.save(sys.argv[1] + "/x22.npy", np.array([[1, 2], [-3, 0.25]], np.float32))
np.save(sys.argv[1] + "/x34.npy", (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 3)
PY
expect 0 "y: f32 [2, 2] -> $tmp/min/y.npy" -- "$runner" "$seeds/minimal.octet" "$tmp/min" x="$tmp/x22.npy"
/usr/bin/python3 - "$tmp" <<'PY' || fail "minimal.octet: wrong output"
import sys, numpy as np
y = np.load(sys.argv[1] + "/min/y.npy")
assert y.dtype == np.float32 and (y == np.array([[2.5, 0], [-1.5, -1.75]], np.float32)).all(), y
PY
expect 0 "logits: f32 [3, 2]" -- "$runner" "$seeds/mlp.octet" "$tmp/mlp" x="$tmp/x34.npy"
/usr/bin/python3 - "$tmp" "$seeds" <<'PY' || fail "mlp.octet: output differs from numpy"
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
  expect 0 "" -- "$octet" run "$seeds/mlp.octet" --input x="$tmp/x34.npy" --output-dir "$tmp/mlp_octet"
  cmp -s "$tmp/mlp/logits.npy" "$tmp/mlp_octet/logits.npy" || fail "octet-runner and octet run differ on mlp.octet"
fi

expect 1 "newer_version.octet': format version 2 is newer" -- "$runner" "$seeds/newer_version.octet" "$tmp/x" \
  x="$tmp/x22.npy"
expect 1 "failed to load .octet model '$seeds/minimal.octet': failed to compile graph 'minimal': a shape is given" \
  -- "$runner" "$seeds/minimal.octet" "$tmp/x" y="$tmp/x22.npy"
expect 1 "no_such.octet" -- "$runner" "$tmp/no_such.octet" "$tmp/x" x="$tmp/x22.npy"
expect 2 "usage" -- "$runner" "$seeds/minimal.octet"
expect 2 "NAME=FILE.npy" -- "$runner" "$seeds/minimal.octet" "$tmp/x" "$tmp/x22.npy"
[ ! -e "$tmp/x" ] || fail "a failed run created its output folder"

echo "runner_test: $failures failure(s)"
[ "$failures" -eq 0 ]
