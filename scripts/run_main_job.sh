#!/usr/bin/env bash
# The main job: installs the dependencies, builds the release preset's `octet` command, prints its version, and runs
# `octet demo` on the bundled digits data (data/digits.csv.gz): float training, static int8 with three observers,
# dynamic int8, QAT, the numeric suite and the sensitivity analysis, one table of results, and report.html.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=${OCTET_JOBS:-2}
out=${OCTET_DEMO_OUT:-build/demo}

banner() { printf '\n==== %s ====\n' "$*"; }

banner "install dependencies"
bash scripts/install_deps.sh

banner "build (release preset)"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target octet
octet=build/release/tools/octet/octet

banner "octet --version"
"$octet" --version

banner "octet demo --out $out"
start=$(date +%s)
"$octet" demo --out "$out"
banner "main job passed in $(($(date +%s) - start)) s; open $out/report.html"
