#!/usr/bin/env bash
# `octet demo` end to end on the bundled digits data: it exits 0, prints the table, writes the models and
# results.json, and the figures in results.json hold (float CNN >= 96%, every int8 variant within 1 point of its
# float model, int8 models under half the float size), report.json has every section (weights, activations, shadow,
# sensitivity) and report.html its charts; bad data and bad usage fail with the documented statuses.
# Needs bash and python3 (standard library only).
#
# Usage: demo_test.sh path/to/octet
set -u

OCTET=${1:?usage: demo_test.sh path/to/octet}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/octet_demo_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

failed=0
fail() {
  failed=$((failed + 1))
  echo "FAILED: $*"
  [[ -s "$TMP/stderr" ]] && sed 's/^/  stderr: /' "$TMP/stderr" | tail -5
}

start=$(date +%s)
"$OCTET" demo --out "$TMP/demo" >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
echo "octet demo: exit $rc in $(($(date +%s) - start)) s"
cat "$TMP/stdout"
if [[ $rc -ne 0 ]]; then
  fail "octet demo exited $rc"
else
  for row in "CNN   float" "static int8, MinMax" "static int8, Histogram" "static int8, Entropy" "MLP   float" \
             "MLP   dynamic int8" "QAT int8" "numeric suite:" "sensitivity (logits SQNR"; do
    grep -q "$row" "$TMP/stdout" || fail "the table has no row '$row'"
  done
  python3 - "$TMP/demo" <<'PY' || fail "results.json does not hold the expected figures"
import json, os, sys
out = sys.argv[1]
r = json.load(open(os.path.join(out, "results.json")))
rows = {(v["model"], v["variant"]): v for v in r["variants"]}
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("  " + what)
        ok = False
for v in r["variants"]:
    check(os.path.getsize(os.path.join(out, v["file"])) == v["size_bytes"], "%s: size differs from the file" % v["file"])
    check(v["latency_us"] > 0, "%s: no latency" % v["file"])
cnn, mlp = rows[("CNN", "float")], rows[("MLP", "float")]
check(cnn["accuracy_percent"] >= 96.0, "float CNN accuracy %.2f%% < 96%%" % cnn["accuracy_percent"])
check(mlp["accuracy_percent"] >= 85.0, "float MLP accuracy %.2f%% < 85%%" % mlp["accuracy_percent"])
for (model, variant), v in rows.items():
    if variant == "float":
        continue
    base = cnn if model == "CNN" else mlp
    check(v["accuracy_percent"] >= base["accuracy_percent"] - 1.0,
          "%s %s: %.2f%% is more than 1 point under float" % (model, variant, v["accuracy_percent"]))
    check(v["size_bytes"] < base["size_bytes"] / 2, "%s %s: not under half the float size" % (model, variant))
    check(v["logits_sqnr_db"] is not None and v["logits_sqnr_db"] > 20.0, "%s %s: logits SQNR" % (model, variant))
report = json.load(open(os.path.join(out, "report.json")))
check(report["schema_version"] == 1, "report.json: schema_version")
check({w["node"] for w in report["weights"]} >= {"conv1", "conv2", "fc"}, "report.json: weights of conv1, conv2, fc")
check(len(report["activations"]) >= 3 and len(report["shadow"]) >= 3, "report.json: activations and shadow")
for section in ("weights", "activations", "shadow"):
    for e in report[section]:
        check(e.get("exact") or (e["sqnr_db"] is not None and e["sqnr_db"] > 15), "%s %s: SQNR" % (section, e["name"]))
s = report["sensitivity"]
check(len(s["nodes"]) >= 3 and sorted(n["rank"] for n in s["nodes"]) == list(range(1, len(s["nodes"]) + 1)),
      "report.json: sensitivity ranks")
html = open(os.path.join(out, "report.html"), encoding="utf-8").read()
check(html.count("<svg") >= 5 and "<script" not in html, "report.html: charts, no scripts")
sys.exit(0 if ok else 1)
PY
fi

# Bad data: a missing file and a malformed one fail with exit 1 and name the problem; no usage error.
"$OCTET" demo --out "$TMP/bad" --data "$TMP/missing.csv" >/dev/null 2>"$TMP/stderr"
rc=$?
[[ $rc -eq 1 ]] && grep -q "missing.csv" "$TMP/stderr" || fail "missing --data: exit $rc"
printf '1,2,3\n' >"$TMP/short.csv"
"$OCTET" demo --out "$TMP/bad" --data "$TMP/short.csv" >/dev/null 2>"$TMP/stderr"
rc=$?
[[ $rc -eq 1 ]] && grep -q "short.csv line 1: 3 fields" "$TMP/stderr" || fail "malformed --data: exit $rc"
"$OCTET" demo --out "$TMP/bad" --backend nonsense >/dev/null 2>"$TMP/stderr"
rc=$?
[[ $rc -eq 2 ]] || fail "unknown --backend: exit $rc, expected 2"

[[ $failed -eq 0 ]] && echo "demo test passed"
exit $((failed > 0))
