#!/usr/bin/env bash
# End-to-end tests of the `octet` command: outputs against committed expected files (tests/data/cli, made by
# generate.py there), exit statuses (0 ok, 1 runtime error, 2 bad usage), no output left behind by a failure, and
# the JSON of `octet bench`. Needs bash, cmp and python3 (standard library only).
#
# Usage: cli_test.sh path/to/octet [tests/data/cli]
set -u

OCTET=${1:?usage: cli_test.sh path/to/octet [data dir]}
DATA=${2:-"$(cd "$(dirname "$0")/../data/cli" && pwd)"}
# shellcheck source=tests/cli/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
test_begin octet_cli_test
unset OCTET_ISA

# npy_same A B: same dtype, shape and data bytes (header layout may differ). Prints the first difference.
npy_same() {
  python3 - "$1" "$2" <<'PY'
import ast, struct, sys

def load(path):
    with open(path, "rb") as f:
        b = f.read()
    if b[:6] != b"\x93NUMPY":
        sys.exit("%s: not a .npy file" % path)
    major = b[6]
    if major == 1:
        hlen, start = struct.unpack("<H", b[8:10])[0], 10
    else:
        hlen, start = struct.unpack("<I", b[8:12])[0], 12
    header = ast.literal_eval(b[start:start + hlen].decode("latin1"))
    descr = header["descr"].lstrip("<|=")
    return descr, tuple(header["shape"]), header["fortran_order"], b[start + hlen:]

a, b = load(sys.argv[1]), load(sys.argv[2])
if a[:3] != b[:3]:
    sys.exit("header differs: %s vs %s" % (a[:3], b[:3]))
if a[3] != b[3]:
    size = {"u1": 1, "i1": 1, "i4": 4, "f4": 4}.get(a[0], 1)
    first = next(i for i in range(min(len(a[3]), len(b[3]))) if a[3][i] != b[3][i]) if len(a[3]) == len(b[3]) else 0
    sys.exit("data differs (%d vs %d bytes), first at element %d" % (len(a[3]), len(b[3]), first // size))
PY
}

# expect_ok NAME EXPECTED.npy -- CMD...: CMD exits 0 and writes $TMP/out.npy equal to EXPECTED.
expect_ok() {
  local name=$1 expected=$2
  shift 3
  rm -f "$TMP/out.npy"
  run "$@"
  if [[ $rc -ne 0 ]]; then
    fail "$name: exit $rc, expected 0"
  elif ! why=$(npy_same "$TMP/out.npy" "$expected" 2>&1); then
    fail "$name: output differs from $(basename "$expected"): $why"
  else
    pass
  fi
}

# expect_rc NAME RC PATTERN -- CMD...: CMD exits RC, its stderr matches PATTERN (grep -E; "" = anything), and the
# folder $TMP/fail (where failing commands write) stays empty: no output, no temporary file.
expect_rc() {
  local name=$1 want=$2 pattern=$3
  shift 4
  rm -rf "$TMP/fail"
  mkdir -p "$TMP/fail"
  run "$@"
  if [[ $rc -ne $want ]]; then
    fail "$name: exit $rc, expected $want"
  elif [[ -n "$pattern" ]] && ! grep -Eq -- "$pattern" "$TMP/stderr"; then
    fail "$name: stderr does not match '$pattern'"
  elif [[ -n "$(ls -A "$TMP/fail")" ]]; then
    fail "$name: left files behind after failing: $(ls -A "$TMP/fail")"
  else
    pass
  fi
}

# ------------------------------------------------------------------------------------------------ --version
run "$OCTET" --version
if [[ $rc -eq 0 ]] && grep -q '^octet [0-9]' "$TMP/stdout" && grep -q '^git: ' "$TMP/stdout" &&
  grep -q '^compiler: ' "$TMP/stdout" && grep -q '^threading: ' "$TMP/stdout" &&
  grep -q '^isas compiled: scalar' "$TMP/stdout" && grep -q '^isas detected: scalar' "$TMP/stdout" &&
  grep -q '^cpu features: ' "$TMP/stdout" && grep -q '^isas enabled: scalar' "$TMP/stdout"; then
  pass
else
  fail "--version: exit $rc or missing lines: $(cat "$TMP/stdout")"
fi
OCTET_ISA=scalar run "$OCTET" --version
if [[ $rc -eq 0 ]] && grep -q '^isas enabled: scalar (OCTET_ISA=scalar)$' "$TMP/stdout"; then pass; else
  fail "OCTET_ISA=scalar --version: exit $rc, $(grep enabled "$TMP/stdout")"
fi
run "$OCTET" --version --verbose
if [[ $rc -eq 0 ]] && grep -q 'quantize_f32_u8_ukernel__scalar' "$TMP/stdout"; then pass; else
  fail "--version --verbose lists no kernels"
fi
OCTET_ISA=bogus run "$OCTET" --version
if [[ $rc -eq 1 ]] && grep -q 'OCTET_ISA' "$TMP/stderr"; then pass; else fail "OCTET_ISA=bogus --version: exit $rc"; fi
for args in "--help" "tensor quantize --help" "bench quantize --help"; do
  # shellcheck disable=SC2086
  run "$OCTET" $args
  if [[ $rc -eq 0 ]] && grep -q 'Usage' "$TMP/stdout"; then pass; else fail "octet $args: exit $rc"; fi
done

# ------------------------------------------------------------------------------- quantize / dequantize
X=$DATA/x.npy
O=$TMP/out.npy
declare -A ZP=([quint8]=3 [qint8]=-3 [qint32]=1000)
declare -A SHORT=([quint8]=u8 [qint8]=s8 [qint32]=s32)
for dtype in quint8 qint8 qint32; do
  s=${SHORT[$dtype]}
  for extra in "" "--isa scalar" "--threads 1" "--threads 2"; do
    # shellcheck disable=SC2086
    expect_ok "quantize per-tensor $dtype $extra" "$DATA/q_pt_$s.npy" -- \
      "$OCTET" tensor quantize "$X" --scale 0.5 --zero-point "${ZP[$dtype]}" --dtype $dtype $extra -o "$O"
    # shellcheck disable=SC2086
    expect_ok "dequantize per-tensor $dtype $extra" "$DATA/dq_pt_$s.npy" -- \
      "$OCTET" tensor dequantize "$DATA/q_pt_$s.npy" --scale 0.5 --zero-point "${ZP[$dtype]}" --dtype $dtype $extra \
      -o "$O"
  done
  expect_ok "dequantize per-tensor $dtype, dtype from the file" "$DATA/dq_pt_$s.npy" -- \
    "$OCTET" tensor dequantize "$DATA/q_pt_$s.npy" --scale 0.5 --zero-point "${ZP[$dtype]}" -o "$O"
done
expect_ok "quantize quint8 over [10, 200]" "$DATA/q_pt_u8_range.npy" -- \
  "$OCTET" tensor quantize "$X" --scale 0.5 --zero-point 13 --dtype quint8 --quant-min 10 --quant-max 200 -o "$O"
expect_ok "quantize accepts u8 as a dtype name" "$DATA/q_pt_u8.npy" -- \
  "$OCTET" tensor quantize "$X" --scale=0.5 --zero-point=3 --dtype=u8 --output "$O"

for extra in "" "--isa scalar" "--threads 2"; do
  # shellcheck disable=SC2086
  expect_ok "quantize per-channel axis 1 quint8 (int64 zero points) $extra" "$DATA/q_pc_u8.npy" -- \
    "$OCTET" tensor quantize "$X" --axis 1 --scales "$DATA/pc_scales.npy" --zero-points "$DATA/pc_zps.npy" \
    --dtype quint8 $extra -o "$O"
  # shellcheck disable=SC2086
  expect_ok "quantize per-channel axis -1 qint8 $extra" "$DATA/q_pc4_s8.npy" -- \
    "$OCTET" tensor quantize "$X" --axis -1 --scales "$DATA/pc4_scales.npy" --zero-points "$DATA/pc4_zps.npy" \
    --dtype qint8 $extra -o "$O"
done
expect_ok "dequantize per-channel axis 1 quint8" "$DATA/dq_pc_u8.npy" -- \
  "$OCTET" tensor dequantize "$DATA/q_pc_u8.npy" --axis 1 --scales "$DATA/pc_scales.npy" \
  --zero-points "$DATA/pc_zps.npy" --dtype quint8 -o "$O"
expect_ok "dequantize per-channel axis 2 qint8" "$DATA/dq_pc4_s8.npy" -- \
  "$OCTET" tensor dequantize "$DATA/q_pc4_s8.npy" --axis 2 --scales "$DATA/pc4_scales.npy" \
  --zero-points "$DATA/pc4_zps.npy" -o "$O"

# Round trip through files written by octet itself.
run "$OCTET" tensor quantize "$X" --scale 0.5 --zero-point 3 --dtype quint8 -o "$TMP/rt_q.npy"
expect_ok "round trip: dequantize(quantize(x))" "$DATA/dq_pt_u8.npy" -- \
  "$OCTET" tensor dequantize "$TMP/rt_q.npy" --scale 0.5 --zero-point 3 --dtype quint8 -o "$O"

# ------------------------------------------------------------------------------------------- fake-quantize
for extra in "" "--isa scalar" "--threads 2"; do
  rm -f "$TMP/mask.npy"
  # shellcheck disable=SC2086
  expect_ok "fake-quantize per-tensor [0, 15] $extra" "$DATA/fq_pt.npy" -- \
    "$OCTET" tensor fake-quantize "$X" --scale 0.5 --zero-point 3 --quant-min 0 --quant-max 15 $extra -o "$O" \
    --mask "$TMP/mask.npy"
  if why=$(npy_same "$TMP/mask.npy" "$DATA/fq_pt_mask.npy" 2>&1); then pass; else
    fail "fake-quantize per-tensor mask $extra: $why"
  fi
  rm -f "$TMP/mask.npy"
  # shellcheck disable=SC2086
  expect_ok "fake-quantize per-channel axis 1 [-8, 7] $extra" "$DATA/fq_pc.npy" -- \
    "$OCTET" tensor fake-quantize "$X" --axis 1 --scales "$DATA/pc_scales.npy" --zero-points "$DATA/fq_pc_zps.npy" \
    --quant-min -8 --quant-max 7 $extra -o "$O" --mask "$TMP/mask.npy"
  if why=$(npy_same "$TMP/mask.npy" "$DATA/fq_pc_mask.npy" 2>&1); then pass; else
    fail "fake-quantize per-channel mask $extra: $why"
  fi
done
expect_ok "fake-quantize without --mask, explicit --dtype qint32" "$DATA/fq_pt.npy" -- \
  "$OCTET" tensor fake-quantize "$X" --scale 0.5 --zero-point 3 --quant-min 0 --quant-max 15 --dtype qint32 -o "$O"

# ---------------------------------------------------------------------------------------------------- NaN
expect_rc "quantize NaN input (default --nan error)" 1 "nan\.npy" -- \
  "$OCTET" tensor quantize "$DATA/nan.npy" --scale 0.5 --zero-point 3 --dtype quint8 -o "$TMP/fail/out.npy"
expect_rc "quantize NaN input (--nan error)" 1 "nan\.npy" -- \
  "$OCTET" tensor quantize "$DATA/nan.npy" --scale 0.5 --zero-point 3 --dtype quint8 --nan error \
  -o "$TMP/fail/out.npy"
expect_ok "quantize NaN input --nan zero-point" "$DATA/q_nan_u8.npy" -- \
  "$OCTET" tensor quantize "$DATA/nan.npy" --scale 0.5 --zero-point 3 --dtype quint8 --nan zero-point -o "$O"
expect_rc "fake-quantize NaN input" 1 "nan\.npy" -- \
  "$OCTET" tensor fake-quantize "$DATA/nan.npy" --scale 0.5 --zero-point 3 --quant-min 0 --quant-max 15 \
  -o "$TMP/fail/out.npy" --mask "$TMP/fail/mask.npy"
rm -f "$TMP/mask.npy"
expect_ok "fake-quantize NaN input --nan zero-point" "$DATA/fq_nan.npy" -- \
  "$OCTET" tensor fake-quantize "$DATA/nan.npy" --scale 0.5 --zero-point 3 --quant-min 0 --quant-max 15 \
  --nan zero-point -o "$O" --mask "$TMP/mask.npy"
if why=$(npy_same "$TMP/mask.npy" "$DATA/fq_nan_mask.npy" 2>&1); then pass; else fail "fake-quantize NaN mask: $why"; fi

# A failure leaves an existing output untouched.
cp "$DATA/x.npy" "$TMP/keep.npy"
run "$OCTET" tensor quantize "$DATA/nan.npy" --scale 0.5 --zero-point 3 --dtype quint8 -o "$TMP/keep.npy"
if [[ $rc -eq 1 ]] && cmp -s "$TMP/keep.npy" "$DATA/x.npy"; then pass; else
  fail "a failed quantize changed the existing output file (exit $rc)"
fi

# --------------------------------------------------------------------------------------- runtime errors (1)
F=$TMP/fail/out.npy
head -c 100 "$X" >"$TMP/truncated.npy"
printf 'not a numpy file' >"$TMP/garbage.npy"
QP=(--scale 0.5 --zero-point 3 --dtype quint8)
expect_rc "missing input file" 1 "failed to read .*'$TMP/missing\.npy'" -- \
  "$OCTET" tensor quantize "$TMP/missing.npy" "${QP[@]}" -o "$F"
expect_rc "truncated input file" 1 "truncated\.npy" -- \
  "$OCTET" tensor quantize "$TMP/truncated.npy" "${QP[@]}" -o "$F"
expect_rc "not a .npy file" 1 "garbage\.npy" -- "$OCTET" tensor quantize "$TMP/garbage.npy" "${QP[@]}" -o "$F"
expect_rc "float64 input" 1 "x_f64\.npy" -- "$OCTET" tensor quantize "$DATA/x_f64.npy" "${QP[@]}" -o "$F"
expect_rc "int32 input to quantize" 1 "x_s32\.npy.*float32" -- \
  "$OCTET" tensor quantize "$DATA/x_s32.npy" "${QP[@]}" -o "$F"
expect_rc "int32 input to fake-quantize" 1 "x_s32\.npy" -- \
  "$OCTET" tensor fake-quantize "$DATA/x_s32.npy" --scale 0.5 --zero-point 3 --quant-min 0 --quant-max 15 -o "$F"
expect_rc "float32 input to dequantize" 1 "x\.npy" -- "$OCTET" tensor dequantize "$X" "${QP[@]}" -o "$F"
expect_rc "dequantize with --dtype differing from the file" 1 "q_pt_u8\.npy.*qint8|q_pt_u8\.npy.*s8" -- \
  "$OCTET" tensor dequantize "$DATA/q_pt_u8.npy" --scale 0.5 --zero-point 3 --dtype qint8 -o "$F"
# quantize_pc AXIS SCALES ZERO_POINTS DTYPE: per-channel quantize of $X into $F (the folder failures must leave empty).
quantize_pc() {
  "$OCTET" tensor quantize "$X" --axis "$1" --scales "$2" --zero-points "$3" --dtype "$4" -o "$F"
}
expect_rc "missing scales file" 1 "nope\.npy" -- quantize_pc 1 "$TMP/nope.npy" "$DATA/pc_zps.npy" quint8
expect_rc "2-D scales" 1 "scales_2d\.npy" -- quantize_pc 1 "$DATA/scales_2d.npy" "$DATA/pc_zps.npy" quint8
expect_rc "float scales given as zero points" 1 "pc_scales\.npy" -- \
  quantize_pc 1 "$DATA/pc_scales.npy" "$DATA/pc_scales.npy" quint8
expect_rc "fewer zero points than scales" 1 "pc_zps_short\.npy" -- \
  quantize_pc 1 "$DATA/pc_scales.npy" "$DATA/pc_zps_short.npy" quint8
expect_rc "channel count differs from the axis length" 1 "x\.npy" -- \
  quantize_pc 2 "$DATA/pc_scales.npy" "$DATA/pc_zps.npy" quint8
expect_rc "axis outside the rank" 1 "axis" -- quantize_pc 3 "$DATA/pc_scales.npy" "$DATA/pc_zps.npy" quint8
expect_rc "per-channel zero point outside the qint8 range" 1 "pc_zps\.npy" -- \
  quantize_pc 1 "$DATA/pc_scales.npy" "$DATA/pc_zps.npy" qint8
expect_rc "output folder does not exist" 1 "no_such_dir" -- \
  "$OCTET" tensor quantize "$X" "${QP[@]}" -o "$TMP/fail/no_such_dir/out.npy"
expect_rc "fake-quantize --mask into a missing folder leaves no output" 1 "no_such_dir" -- \
  "$OCTET" tensor fake-quantize "$X" --scale 0.5 --zero-point 3 --quant-min 0 --quant-max 15 -o "$F" \
  --mask "$TMP/fail/no_such_dir/mask.npy"
expect_rc "malformed OCTET_ISA" 1 "OCTET_ISA" -- env OCTET_ISA=bogus "$OCTET" tensor quantize "$X" "${QP[@]}" -o "$F"

# ------------------------------------------------------------------------------------------- bad usage (2)
expect_rc "no command" 2 "" -- "$OCTET"
expect_rc "tensor without a subcommand" 2 "" -- "$OCTET" tensor
expect_rc "unknown command" 2 "" -- "$OCTET" frobnicate
expect_rc "unknown option" 2 "--frobnicate" -- "$OCTET" tensor quantize "$X" "${QP[@]}" --frobnicate -o "$F"
expect_rc "missing input" 2 "" -- "$OCTET" tensor quantize "${QP[@]}" -o "$F"
expect_rc "missing -o" 2 "output" -- "$OCTET" tensor quantize "$X" "${QP[@]}"
expect_rc "quantize without --dtype" 2 "dtype" -- "$OCTET" tensor quantize "$X" --scale 0.5 --zero-point 3 -o "$F"
expect_rc "no qparams" 2 "scale" -- "$OCTET" tensor quantize "$X" --dtype quint8 -o "$F"
expect_rc "--scale and --scales together" 2 "scale" -- \
  "$OCTET" tensor quantize "$X" --scale 0.5 --zero-point 3 --axis 1 --scales "$DATA/pc_scales.npy" \
  --zero-points "$DATA/pc_zps.npy" --dtype quint8 -o "$F"
expect_rc "--scale without --zero-point" 2 "zero-point" -- \
  "$OCTET" tensor quantize "$X" --scale 0.5 --dtype quint8 -o "$F"
expect_rc "--scales without --axis" 2 "axis" -- \
  "$OCTET" tensor quantize "$X" --scales "$DATA/pc_scales.npy" --zero-points "$DATA/pc_zps.npy" --dtype quint8 \
  -o "$F"
expect_rc "--axis without --scales" 2 "scales" -- "$OCTET" tensor quantize "$X" "${QP[@]}" --axis 1 -o "$F"
expect_rc "bad --dtype" 2 "dtype" -- "$OCTET" tensor quantize "$X" --scale 0.5 --zero-point 3 --dtype qint4 -o "$F"
expect_rc "float --dtype" 2 "dtype" -- "$OCTET" tensor quantize "$X" --scale 0.5 --zero-point 3 --dtype f32 -o "$F"
expect_rc "bad --nan" 2 "nan" -- "$OCTET" tensor quantize "$X" "${QP[@]}" --nan maybe -o "$F"
expect_rc "--scale 0" 2 "scale" -- "$OCTET" tensor quantize "$X" --scale 0 --zero-point 3 --dtype quint8 -o "$F"
expect_rc "--scale -1" 2 "scale" -- "$OCTET" tensor quantize "$X" --scale -1 --zero-point 3 --dtype quint8 -o "$F"
expect_rc "--scale inf" 2 "scale" -- "$OCTET" tensor quantize "$X" --scale inf --zero-point 3 --dtype quint8 -o "$F"
expect_rc "--scale not a number" 2 "scale" -- \
  "$OCTET" tensor quantize "$X" --scale half --zero-point 3 --dtype quint8 -o "$F"
expect_rc "--zero-point outside quint8" 2 "zero point" -- \
  "$OCTET" tensor quantize "$X" --scale 0.5 --zero-point 300 --dtype quint8 -o "$F"
expect_rc "--zero-point outside int32" 2 "zero-point" -- \
  "$OCTET" tensor quantize "$X" --scale 0.5 --zero-point 9999999999 --dtype qint32 -o "$F"
expect_rc "--quant-min above --quant-max" 2 "quant-min" -- \
  "$OCTET" tensor quantize "$X" "${QP[@]}" --quant-min 200 --quant-max 100 -o "$F"
expect_rc "--quant-max outside quint8" 2 "quant-m" -- \
  "$OCTET" tensor quantize "$X" "${QP[@]}" --quant-max 256 -o "$F"
expect_rc "bad --isa" 2 "isa" -- "$OCTET" tensor quantize "$X" "${QP[@]}" --isa sse9 -o "$F"
expect_rc "bad --threads" 2 "threads" -- "$OCTET" tensor quantize "$X" "${QP[@]}" --threads -1 -o "$F"
expect_rc "fake-quantize without --quant-min" 2 "quant-min" -- \
  "$OCTET" tensor fake-quantize "$X" --scale 0.5 --zero-point 3 --quant-max 15 -o "$F"
expect_rc "fake-quantize --mask equal to -o" 2 "mask" -- \
  "$OCTET" tensor fake-quantize "$X" --scale 0.5 --zero-point 3 --quant-min 0 --quant-max 15 -o "$F" --mask "$F"
expect_rc "bad usage wins over a missing file" 2 "" -- \
  "$OCTET" tensor quantize "$TMP/missing.npy" --scale 0.5 --zero-point 3 -o "$F"
expect_rc "dequantize: qparams invalid for the file's dtype" 2 "zero point" -- \
  "$OCTET" tensor dequantize "$DATA/q_pt_s8.npy" --scale 0.5 --zero-point 200 -o "$F"
expect_rc "bench --elements 0" 2 "elements" -- "$OCTET" bench quantize --elements 0 --json
expect_rc "bench --elements 12Xi" 2 "elements" -- "$OCTET" bench quantize --elements 12Xi --json
expect_rc "bench --repetitions 0" 2 "repetitions" -- "$OCTET" bench quantize --repetitions 0 --json
expect_rc "bench bad --isa" 2 "isa" -- "$OCTET" bench dequantize --isa avx9 --json
expect_rc "bench bad --dtype" 2 "dtype" -- "$OCTET" bench dequantize --dtype float --json

# ------------------------------------------------------------------------------------------------- bench
# check_bench_json OP ISA: every stdout line is a JSON object with the keys compare and the brief need.
check_bench_json() {
  python3 - "$1" "$2" "$TMP/stdout" <<'PY'
import json, sys
op, isa, path = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [l for l in open(path).read().splitlines() if l.strip()]
if not lines:
    sys.exit("no output")
for line in lines:
    o = json.loads(line)
    for k in ("op", "elements", "threads", "isa", "kernel", "us", "gbps"):
        if k not in o:
            sys.exit("key %r missing in %s" % (k, line))
    if o["op"] != op:
        sys.exit("op %r, expected %r" % (o["op"], op))
    if not (o["us"] > 0 and o["gbps"] > 0):
        sys.exit("us and gbps must be > 0: %s" % line)
    if isa and o["isa"] != isa:
        sys.exit("isa %r, expected %r" % (o["isa"], isa))
    if not o["kernel"].endswith("__" + o["isa"]):
        sys.exit("kernel %r does not match isa %r" % (o["kernel"], o["isa"]))
    want = o["elements"] * (5 if o.get("dtype", "u8") in ("u8", "s8") else 8) / (o["us"] * 1e3)
    if abs(o["gbps"] - want) > 1e-6 * want:
        sys.exit("gbps %r is not bytes/us: expected %r" % (o["gbps"], want))
PY
}
for op in quantize dequantize; do
  for args in "--threads 1" "--threads 2" "--isa scalar --threads 1" "--dtype qint8" "--dtype qint32 --isa avx2"; do
    # shellcheck disable=SC2086
    run "$OCTET" bench $op --elements 100003 --repetitions 3 $args --json
    isa=""
    [[ "$args" == *"--isa scalar"* ]] && isa=scalar
    if [[ $rc -ne 0 ]]; then
      fail "bench $op $args: exit $rc"
    elif ! why=$(check_bench_json $op "$isa" 2>&1); then
      fail "bench $op $args: $why"
    else
      pass
    fi
  done
done
run "$OCTET" bench quantize --elements 64Ki --repetitions 2
if [[ $rc -eq 0 ]] && grep -q 'GB/s' "$TMP/stdout"; then pass; else fail "bench quantize without --json: exit $rc"; fi

# octet bench conv (the interface ../shared/peers/compare uses): JSON fields, gops = 2 OH OW Cout Cin/g KH KW / us.
check_conv_json() {
  python3 - "$1" "$TMP/stdout" <<'PY'
import json, sys
path_want, path = sys.argv[1], sys.argv[2]
lines = [l for l in open(path).read().splitlines() if l.strip()]
if len(lines) != 1:
    sys.exit("expected one line, got %d" % len(lines))
o = json.loads(lines[0])
for k in ("op", "c_in", "c_out", "h", "w", "kh", "kw", "stride", "pad", "groups", "threads", "isa", "kernel", "path",
          "us", "gops"):
    if k not in o:
        sys.exit("key %r missing in %s" % (k, lines[0]))
if o["op"] != "conv" or o["path"] != path_want:
    sys.exit("op %r path %r, expected conv and %r" % (o["op"], o["path"], path_want))
if not o["kernel"].endswith("__" + o["isa"]):
    sys.exit("kernel %r does not match isa %r" % (o["kernel"], o["isa"]))
oh = (o["h"] + 2 * o["pad"] - o["kh"]) // o["stride"] + 1
ow = (o["w"] + 2 * o["pad"] - o["kw"]) // o["stride"] + 1
want = 2 * oh * ow * o["c_out"] * (o["c_in"] // o["groups"]) * o["kh"] * o["kw"] / (o["us"] * 1e3)
if not (o["us"] > 0 and abs(o["gops"] - want) <= 1e-6 * want):
    sys.exit("gops %r, expected %r" % (o["gops"], want))
PY
}
for args in "--c-in 3 --c-out 16 --h 20 --w 18 --kh 7 --kw 7 --stride 2 --pad 3:im2col" \
            "--c-in 24 --c-out 24 --h 9 --w 9 --kh 3 --kw 3 --pad 1 --groups 24 --threads 2:depthwise" \
            "--c-in 32 --c-out 8 --h 5 --w 5 --kh 1 --kw 1 --isa scalar:1x1"; do
  # shellcheck disable=SC2086
  run "$OCTET" bench conv ${args%:*} --repetitions 2 --json
  if [[ $rc -ne 0 ]]; then
    fail "bench conv ${args%:*}: exit $rc"
  elif ! why=$(check_conv_json "${args##*:}" 2>&1); then
    fail "bench conv ${args%:*}: $why"
  else
    pass
  fi
done
# 7-bit activations (what compare's avx2 tier passes): AVX2 without VNNI may take its vpmaddubsw kernel.
run "$OCTET" bench conv --c-in 16 --c-out 24 --h 9 --w 9 --kh 3 --kw 3 --pad 1 --isa avx2 --activation-bits 7 \
  --repetitions 2 --json
if [[ $rc -ne 0 ]]; then
  fail "bench conv --activation-bits 7: exit $rc"
elif ! why=$(python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read().splitlines()[0])
if o.get("activation_bits") != 7:
    sys.exit("activation_bits %r, expected 7" % o.get("activation_bits"))
if o["kernel"].endswith("__avx2") and "maddubs" not in o["kernel"]:
    sys.exit("7-bit activations on avx2 ran %r, not the vpmaddubsw kernel" % o["kernel"])
' "$TMP/stdout" 2>&1); then
  fail "bench conv --activation-bits 7: $why"
else
  pass
fi
expect_rc "bench conv --activation-bits 6" 2 "activation-bits" -- \
  "$OCTET" bench conv --c-in 6 --c-out 6 --h 4 --w 4 --kh 3 --kw 3 --activation-bits 6 --json
expect_rc "bench conv --groups not dividing" 2 "groups" -- \
  "$OCTET" bench conv --c-in 6 --c-out 6 --h 4 --w 4 --kh 3 --kw 3 --groups 4 --json
expect_rc "bench conv --kh 0" 2 "kh" -- "$OCTET" bench conv --c-in 6 --c-out 6 --h 4 --w 4 --kh 0 --kw 3 --json
expect_rc "bench conv kernel larger than the input" 1 "does not fit" -- \
  "$OCTET" bench conv --c-in 6 --c-out 6 --h 2 --w 4 --kh 5 --kw 3 --json

# ------------------------------------------------------------------------------------------------ .octet models
# `octet run` and `octet inspect` on the .octet seed files (tests/fuzz/make_octet_seeds.py), told apart from ONNX
# by extension or magic bytes.
OCTETS="$(cd "$(dirname "$0")/../fuzz/corpus/octet" && pwd)"
# write_f32 PATH D0,D1 VALUES...: a float32 .npy file (python3 standard library only).
write_f32() {
  python3 - "$@" <<'PY'
import struct, sys
path, dims, values = sys.argv[1], [int(d) for d in sys.argv[2].split(",")], [float(v) for v in sys.argv[3:]]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % d for d in dims)
header += " " * (-(len(header) + 11) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % len(values), *values))
PY
}
write_f32 "$TMP/x22.npy" 2,2 1 2 -3 0.25
write_f32 "$TMP/y22.npy" 2,2 2.5 0 -1.5 -1.75
cp "$OCTETS/minimal.octet" "$TMP/minimal.model"
for model in "$OCTETS/minimal.octet" "$TMP/minimal.model"; do
  rm -rf "$TMP/run"
  run "$OCTET" run "$model" --input x="$TMP/x22.npy" --output-dir "$TMP/run"
  if [[ $rc -ne 0 ]]; then
    fail "run $(basename "$model"): exit $rc"
  elif ! why=$(npy_same "$TMP/run/y.npy" "$TMP/y22.npy" 2>&1); then
    fail "run $(basename "$model"): $why"
  else
    pass
  fi
done
run "$OCTET" inspect "$OCTETS/mlp.octet" --input-shape x=3,4
if [[ $rc -eq 0 ]] && grep -q '^format .octet version 1$' "$TMP/stdout" &&
  grep -q '^metadata producer: "make_octet_seeds.py"$' "$TMP/stdout" &&
  grep -q '^output logits: f32 \[3, 2\]$' "$TMP/stdout" && grep -Eq '^ +2 fc2 +Gemm ' "$TMP/stdout"; then
  pass
else
  fail "inspect mlp.octet: exit $rc: $(head -c 400 "$TMP/stdout")"
fi
expect_rc "run a newer .octet version" 1 "newer_version.octet': format version 2 is newer than this build" -- \
  "$OCTET" run "$OCTETS/newer_version.octet" --input x="$TMP/x22.npy" --output-dir "$TMP/fail/out"
head -c 300 "$OCTETS/minimal.octet" >"$TMP/truncated.octet"
expect_rc "run a truncated .octet file" 1 \
  "truncated.octet': the file is truncated: the header says 392 bytes, it has 300" -- \
  "$OCTET" run "$TMP/truncated.octet" --input x="$TMP/x22.npy" --output-dir "$TMP/fail/out"
echo "not a model" >"$TMP/text.octet"
expect_rc "inspect a .octet file without the magic" 1 "text.octet': not an .octet file" -- \
  "$OCTET" inspect "$TMP/text.octet"
expect_rc "run a .octet model with a wrong input name" 1 "mlp.octet': it has no input named 'nope'" -- \
  "$OCTET" run "$OCTETS/mlp.octet" --input nope="$TMP/x22.npy" --output-dir "$TMP/fail/out"

# Progress lines: drawn when stderr is a terminal (script(1) gives the command one), never with --quiet, never
# into a pipe.
MODELS="$DATA/../models"
if command -v script >/dev/null 2>&1 && [[ -f "$MODELS/digits_cnn.onnx" ]]; then
  progress_cmd=("$OCTET" quantize "$MODELS/digits_cnn.onnx" --mode static --calib-batch 8
                --calib "image=$MODELS/digits_cnn.input0.npy" -o "$TMP/progress.octet")
  script -qec "${progress_cmd[*]}" /dev/null >"$TMP/tty.txt" 2>&1
  if grep -q "calibrating: 4/4" "$TMP/tty.txt"; then pass; else fail "quantize on a terminal draws no progress"; fi
  script -qec "${progress_cmd[*]} --quiet" /dev/null >"$TMP/tty.txt" 2>&1
  if grep -q "calibrating" "$TMP/tty.txt"; then fail "quantize --quiet draws progress"; else pass; fi
  run "${progress_cmd[@]}"
  if [[ $rc -eq 0 && ! -s "$TMP/stderr" ]]; then pass; else fail "quantize into a pipe wrote to stderr (rc $rc)"; fi
else
  fail "script(1) or tests/data/models/digits_cnn.onnx is missing: the progress checks cannot run"
fi

test_end "cli"
