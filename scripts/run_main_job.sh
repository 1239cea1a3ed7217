#!/usr/bin/env bash
# The main job: installs the dependencies, builds the release preset's `octet` command, prints its version, and
# round-trips the bundled activation tensor through quint8 (quantize, then dequantize), reporting the error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=${OCTET_JOBS:-2}
input=data/example_activations.npy
# quint8 parameters for the tensor's range [-0.29, 5.9] (see data/make_example_activations.py): a power-of-two scale
# makes x / scale exact, so every element's round-trip error is at most scale / 2.
scale=0.03125
zero_point=64

banner() { printf '\n==== %s ====\n' "$*"; }

banner "install dependencies"
bash scripts/install_deps.sh

banner "build (release preset)"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target octet
octet=build/release/tools/octet/octet

banner "octet --version"
"$octet" --version

tmp=$(mktemp -d "${TMPDIR:-/tmp}/octet-main.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

banner "quantize / dequantize round trip on $input"
(
  set -x
  "$octet" tensor quantize "$input" --scale "$scale" --zero-point "$zero_point" --dtype quint8 -o "$tmp/q.npy"
  "$octet" tensor dequantize "$tmp/q.npy" --scale "$scale" --zero-point "$zero_point" --dtype quint8 -o "$tmp/dq.npy"
)
/usr/bin/python3 - "$input" "$tmp/q.npy" "$tmp/dq.npy" "$scale" <<'EOF'
import sys

import numpy as np

x = np.load(sys.argv[1])
q = np.load(sys.argv[2])
dq = np.load(sys.argv[3])
scale = float(sys.argv[4])
if q.dtype != np.uint8 or q.shape != x.shape or dq.dtype != np.float32 or dq.shape != x.shape:
    sys.exit(f"round trip: unexpected outputs: q {q.dtype}{q.shape}, dq {dq.dtype}{dq.shape}, input {x.dtype}{x.shape}")
err = np.abs(dq.astype(np.float64) - x.astype(np.float64))
print(f"input    {x.dtype}{list(x.shape)}, range [{x.min():.5f}, {x.max():.5f}]")
print(f"quint8   range [{q.min()}, {q.max()}], {len(np.unique(q))} distinct values")
print(f"max abs error {err.max():.6g} (mean {err.mean():.6g}); bound scale/2 = {scale / 2:.6g}")
if not err.max() <= scale / 2:
    sys.exit("round trip: error exceeds scale / 2")
EOF
banner "main job passed"
