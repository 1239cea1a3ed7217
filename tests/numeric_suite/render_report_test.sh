#!/usr/bin/env bash
# The HTML report in headless Chromium (issue 9): renders REPORT.json with render_report (RenderReportHtml), checks
# the page is self-contained (no <script>, no http(s):// URL), takes a 1200x2400 screenshot with Debian's chromium
# and checks that it shows the charts (check_screenshot.py: SQNR bars by count, colour, position and length;
# histograms, channel ranges and sensitivity bars by colour and place).
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

"$render" "$report" "$work/report.html" || fail "render_report could not render $report"
if grep -qi '<script' "$work/report.html"; then fail "the report has a <script> element"; fi
if grep -qiE 'https?://' "$work/report.html"; then
  fail "the report names a network URL: $(grep -oiE 'https?://[^"<> ]*' "$work/report.html" | head -n 3)"
fi

# A fresh profile in $work; no background networking, so the page and Chromium have nothing to fetch.
if ! timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
       --user-data-dir="$work/profile" --no-first-run --disable-background-networking --disable-component-update \
       --window-size=1200,2400 --screenshot="$work/report.png" "file://$work/report.html" \
       >"$work/chromium.log" 2>&1; then
  tail -n 20 "$work/chromium.log"
  fail "chromium could not take the screenshot"
fi
[ -s "$work/report.png" ] || { tail -n 20 "$work/chromium.log"; fail "chromium wrote no screenshot"; }
shot=$(date +%s%N)

python3 "$here/check_screenshot.py" "$work/report.png" "$report" || fail "the screenshot does not show the charts"
end=$(date +%s%N)
echo "render + screenshot $(((shot - start) / 1000000)) ms, check $(((end - shot) / 1000000)) ms"
if [ -n "$keep" ]; then cp "$work/report.png" "$keep"; fi
echo "report screenshot checks passed"
