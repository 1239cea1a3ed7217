#!/usr/bin/env bash
# `octet sensitivity` end to end on the digits CNN: the ranking table, the keep-float proposal (reached, already
# met, unreachable), the JSON report (schema 1's "sensitivity" section, written atomically), quiet stderr when
# piped, and exit statuses (1 failure naming the input or file, 2 usage).
# Usage: sensitivity_cli_test.sh OCTET MODELS_DIR
set -uo pipefail
octet=$1
models=$2
# shellcheck source=tests/cli/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/test_lib.sh"
test_begin octet-sensitivity-test

# The CNN reads images [N, 1, 8, 8]; the digits files hold rows of 64.
/usr/bin/python3 - "$models" "$TMP" <<'PY'
import sys, numpy as np
m, t = sys.argv[1], sys.argv[2]
np.save(t + "/calib.npy", np.load(m + "/digits_calib_x.npy").reshape(-1, 1, 8, 8))
np.save(t + "/test.npy", np.load(m + "/digits_test_x.npy")[:120].reshape(-1, 1, 8, 8))
np.save(t + "/labels.npy", np.load(m + "/digits_test_labels.npy")[:120])
PY
m="$models/digits_cnn.onnx"
common=(--calib "image=$TMP/calib.npy" --input "image=$TMP/test.npy" --latency-runs 2)

# SQNR with a target: table, proposal, JSON; nothing on stderr when it is not a terminal.
"$octet" sensitivity "$m" "${common[@]}" --target-sqnr 40 --json "$TMP/r.json" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 0 ] || fail "sensitivity --target-sqnr 40 exited $rc: $(cat "$TMP/out" "$TMP/err")"
[ ! -s "$TMP/err" ] || fail "stderr is not quiet when piped: $(cat "$TMP/err")"
grep -q "all but this" "$TMP/out" || fail "no ranking table: $(cat "$TMP/out")"
grep -q "Conv -> QConv" "$TMP/out" || fail "no Conv row: $(cat "$TMP/out")"
grep -Eq "keep float \([0-9]+ nodes?\): .* target 40.00 dB reached|target 40.00 dB reached with every node int8" \
  "$TMP/out" || fail "no proposal: $(cat "$TMP/out")"
/usr/bin/python3 - "$TMP/r.json" "$TMP/out" <<'PY' || fail "the JSON report does not match the schema or the table"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema_version"] == 1 and r["generator"].startswith("octet ")
assert r["weights"] == r["activations"] == r["shadow"] == []  # required by schema 1; octet compare fills them
assert r["inputs"] == [{"name": "image", "file": r["inputs"][0]["file"], "shape": [120, 1, 8, 8]}], r["inputs"]
s = r["sensitivity"]
assert s["metric"] == "output_sqnr_db" and s["target"] == 40 and s["float"] is None, s
nodes = s["nodes"]
assert [n["rank"] for n in nodes] == list(range(1, len(nodes) + 1))
assert sorted(n["op"] for n in nodes if n["op"] in ("Conv", "Gemm")) == ["Conv", "Conv", "Gemm"]
for n in nodes:
    assert n["only_this_quantized"] is None or n["only_this_quantized"] >= s["all_quantized"], n
    if n["op"] in ("Conv", "Gemm"):
        assert n["int8_latency_us"] > 0 and n["float_latency_us"] > 0, n
gains = [n["all_but_this_quantized"] for n in nodes]
assert gains == sorted(gains, reverse=True), gains
assert s["target_reached"] is True and s["achieved"] >= 40, s
assert set(s["keep_float"]) <= {n["name"] for n in nodes}
# The table shows the same ranking.
table = open(sys.argv[2]).read()
rows = [l.split() for l in table.splitlines() if l.strip()[:1].isdigit() and "->" in l]
assert [int(r[0]) for r in rows] == [n["rank"] for n in nodes]
assert [r[1] for r in rows] == [n["name"] for n in nodes]
PY

# A target the all-int8 model already meets.
expect_output 0 "reached with every node int8" -- "$octet" sensitivity "$m" "${common[@]}" --target-sqnr 5
# Accuracy against labels; 100% is more than the float model reaches.
expect_output 0 "target 1.0000 cannot be reached: with every analysed node float the accuracy is" -- \
  "$octet" sensitivity "$m" "${common[@]}" --labels "$TMP/labels.npy" --target-accuracy 1
# Only the named node (the first of the full ranking): one row.
first=$(/usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['sensitivity']['nodes'][0]['name'])" \
  "$TMP/r.json")
"$octet" sensitivity "$m" "${common[@]}" --node "$first" >"$TMP/one" 2>&1 || fail "--node $first: $(cat "$TMP/one")"
[ "$(grep -c -- ' -> ' "$TMP/one")" -eq 1 ] && grep -qF -- "   1  $first " "$TMP/one" || fail "--node $first: $(cat "$TMP/one")"

# Failures (exit 1) name the input, the file or the node; nothing is written.
expect_output 1 "needs calibration data for input 'image'" -- "$octet" sensitivity "$m" --calib "x=$TMP/calib.npy" \
  --input "image=$TMP/test.npy" --json "$TMP/bad.json"
expect_output 1 "missing.npy" -- \
  "$octet" sensitivity "$m" --calib "image=$TMP/calib.npy" --input "image=$TMP/missing.npy"
expect_output 1 "one label per --input sample (120)" -- \
  "$octet" sensitivity "$m" "${common[@]}" --labels "$TMP/calib.npy"
expect_output 1 "cannot analyse node 'nope'" -- \
  "$octet" sensitivity "$m" "${common[@]}" --node nope --json "$TMP/bad.json"
"$octet" quantize "$m" --calib "image=$TMP/calib.npy" -o "$TMP/m.octet" >/dev/null || fail "octet quantize failed"
expect_output 1 "is a quantized .octet model" -- \
  "$octet" sensitivity "$TMP/m.octet" "${common[@]}" --json "$TMP/bad.json"
[ ! -e "$TMP/bad.json" ] || fail "a failed run wrote its JSON report"
expect_output 1 "$TMP/no/such/dir/r.json" -- "$octet" sensitivity "$m" "${common[@]}" --json "$TMP/no/such/dir/r.json"

# Usage errors (exit 2).
expect_output 2 "--target-accuracy needs --labels" -- "$octet" sensitivity "$m" "${common[@]}" --target-accuracy 0.9
expect_output 2 "with --labels the metric is accuracy" -- "$octet" sensitivity "$m" "${common[@]}" \
  --labels "$TMP/labels.npy" --target-sqnr 30
expect_output 2 "fraction in [0, 1], got 94" -- "$octet" sensitivity "$m" "${common[@]}" --labels "$TMP/labels.npy" \
  --target-accuracy 94
expect_output 2 "excludes" -- "$octet" sensitivity "$m" "${common[@]}" --target-sqnr 30 --target-accuracy 0.9
expect_output 2 "" -- "$octet" sensitivity "$m" --calib "image=$TMP/calib.npy"
expect_output 2 "backend" -- "$octet" sensitivity "$m" "${common[@]}" --backend nope

test_end "octet sensitivity CLI"
