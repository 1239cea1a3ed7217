#!/usr/bin/env bash
# The HTML report in headless Chromium (issue 9): renders REPORT.json with render_report (RenderReportHtml), checks
# the page is self-contained (no <script>, no http(s):// URL), takes a 1200x2400 screenshot with Debian's chromium
# and checks that it shows the charts (check_screenshot.py: the worst-layers table first, SQNR bars by count,
# colour, position and length; histograms, channel ranges and sensitivity bars by colour and place).
# Then the same for a large report made from it (300 layers, 256 channels per weight, like a ResNet): the page must
# stay under 2 MB, lead with the worst-layers table (checked in the screenshot), and collapse its long tables.
#
#   bash tests/numeric_suite/render_report_test.sh RENDER_REPORT REPORT.json [SCREENSHOT.png]
#
# Installs the chromium package with apt-get when it is missing (as root, or with sudo -n). The optional third
# argument keeps the screenshot (docs/report.png is made this way, then optimised).
set -euo pipefail
render=$(realpath "$1")
report=$(realpath "$2")
keep=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fail() { echo "FAILED: $*"; exit 1; }

find_chromium() { command -v chromium || command -v chromium-browser || true; }
chromium=$(find_chromium)
if [ -z "$chromium" ]; then
  echo "installing Debian's chromium package"
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "chromium is missing, and this is not root and has no sudo to install it"
    as_root=(sudo -n)
  fi
  apt_log=$(mktemp)
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -n 1)" ]; then
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$apt_log" 2>&1 ||
      { tail -n 20 "$apt_log"; fail "apt-get update failed"; }
  fi
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
    </dev/null >"$apt_log" 2>&1 || { tail -n 20 "$apt_log"; fail "apt-get install chromium failed"; }
  rm -f "$apt_log"
  chromium=$(find_chromium)
  [ -n "$chromium" ] || fail "chromium is still missing after apt-get install chromium"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s%N)

# screenshot HTML PNG HEIGHT WHAT: a 1200 x HEIGHT headless Chromium screenshot of HTML into PNG. A fresh profile in
# $work; no background networking, so the page and Chromium have nothing to fetch.
screenshot() {
  if ! timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
         --user-data-dir="$work/profile" --no-first-run --disable-background-networking --disable-component-update \
         --window-size="1200,$3" --screenshot="$2" "file://$1" >"$work/chromium.log" 2>&1; then
    tail -n 20 "$work/chromium.log"
    fail "chromium could not take $4"
  fi
}

"$render" "$report" "$work/report.html" || fail "render_report could not render $report"
if grep -qi '<script' "$work/report.html"; then fail "the report has a <script> element"; fi
if grep -qiE 'https?://' "$work/report.html"; then
  fail "the report names a network URL: $(grep -oiE 'https?://[^"<> ]*' "$work/report.html" | head -n 3)"
fi

screenshot "$work/report.html" "$work/report.png" 2400 "the screenshot"
[ -s "$work/report.png" ] || { tail -n 20 "$work/chromium.log"; fail "chromium wrote no screenshot"; }
shot=$(date +%s%N)

python3 "$here/check_screenshot.py" "$work/report.png" "$report" || fail "the screenshot does not show the charts"
end=$(date +%s%N)
echo "render + screenshot $(((shot - start) / 1000000)) ms, check $(((end - shot) / 1000000)) ms"
if [ -n "$keep" ]; then cp "$work/report.png" "$keep"; fi
echo "report screenshot checks passed"

# The large report: every section 300 entries long with SQNRs spread over 12..45 dB, weights with 256 channels.
python3 - "$report" "$work/large.json" <<'PY' || fail "could not write the large report"
import copy, json, sys
r = json.load(open(sys.argv[1]))
for section in ("weights", "activations", "shadow"):
    template, out = r[section], []
    for i in range(300):
        e = copy.deepcopy(template[i % len(template)])
        e["name"] = f"blocks.{i}.{e['name']}"
        if "node" in e:
            e["node"] = f"blocks.{i}.{e['node']}"
        e["sqnr_db"] = 12 + (i * 37 % 331) / 10.0
        e.pop("exact", None)
        if section == "weights" and e.get("channels"):
            e["channels"] = [dict(e["channels"][c % len(e["channels"])]) for c in range(256)]
        out.append(e)
    r[section] = out
r.pop("sensitivity", None)
json.dump(r, open(sys.argv[2], "w"))
PY
"$render" "$work/large.json" "$work/large.html" || fail "render_report could not render the large report"
size=$(stat -c %s "$work/large.html")
echo "large report (300 layers, 256 channels per weight): $size bytes of HTML"
[ "$size" -lt 2000000 ] || fail "the large report is $size bytes (limit 2 MB)"
grep -q '<details><summary>All 300 entries</summary>' "$work/large.html" || fail "the large report's tables are not collapsed"
first_section=$(grep -o '<section id="[a-z]*"' "$work/large.html" | sed -n 2p)
[ "$first_section" = '<section id="worst"' ] || fail "the large report does not lead with the worst layers: $first_section"
screenshot "$work/large.html" "$work/large.png" 1400 "the screenshot of the large report"
python3 "$here/check_screenshot.py" "$work/large.png" "$work/large.json" --summary-only ||
  fail "the large report's screenshot does not lead with the worst layers"
echo "large report checks passed"
