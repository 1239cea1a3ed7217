#!/usr/bin/env bash
# The one test command (README's second set-up command; .ci/run calls it). Stages, in order, stopping at the first
# failure:
#   deps     scripts/install_deps.sh
#   release  x86 g++ Release with -Werror: configure, build, ctest
#   install  installs the release build into a temporary prefix, builds examples/ against it (find_package and
#            pkg-config) and runs them; reuses build/release, building only what the install needs
#   aarch64  cross build once, ctest under qemu twice: -cpu max (every NEON tier) and -cpu cortex-a53 (no dot product)
#   asan     clang++-14 with -Werror, ASan + UBSan: configure, build (the fuzz targets too), ctest. It is CI's clang
#            build: one clang build serves the clang warnings, the sanitizers and the fuzzers.
#   fuzz     every libFuzzer target (built by the asan stage) for OCTET_FUZZ_SECONDS (default 60), all at once, each
#            on a temporary copy of its seed corpus
# Not run by default, by name only: clang (x86 clang++-14 Release with -Werror: configure, build, ctest), the
# unsanitized clang build the asan stage stands in for.
# then a summary of stage times, and last of all ctest's own summary of the x86 release entries that run octet_tests
# (again, with a fresh random seed).
#
# Usage: bash scripts/run_all_tests.sh [stage...]   (default: every stage but clang; "release asan" runs just those two)
# Environment: OCTET_JOBS (build and test parallelism, default 2), OCTET_FUZZ_SECONDS (default 60).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

default_stages=(deps release install aarch64 asan fuzz)
all_stages=("${default_stages[@]}" clang)
jobs=${OCTET_JOBS:-2}
fuzz_seconds=${OCTET_FUZZ_SECONDS:-60}

banner() { printf '\n======== %s ========\n' "$*"; }
step() { printf '\n---- %s\n' "$*"; }

# CPU seconds used by finished child processes: beside wall time it shows what a stage costs on a busy machine.
ticks_per_s=$(getconf CLK_TCK)
cpu_seconds() {
  local f
  read -r -a f </proc/$$/stat
  echo $(((f[15] + f[16]) / ticks_per_s))
}

timings=()
current=""
run_start=$SECONDS
run_cpu=$(cpu_seconds)
tmp_root=""

print_timings() {
  printf '%-10s %8s %8s\n' stage wall_s cpu_s
  local t
  for t in "${timings[@]}"; do printf '%-10s %8s %8s\n' ${t}; done
  printf '%-10s %8s %8s\n' total $((SECONDS - run_start)) $(($(cpu_seconds) - run_cpu))
}

on_exit() {
  local rc=$?
  [ -n "$tmp_root" ] && rm -rf "$tmp_root"
  if [ $rc -ne 0 ]; then
    banner "FAILED: stage '${current:-?}' (exit status $rc)"
    print_timings
    banner "FAILED: stage '${current:-?}'"
  fi
  exit $rc
}

configure_and_build() {
  local preset=$1
  step "configure: cmake --preset $preset"
  cmake --preset "$preset"
  step "build: cmake --build --preset $preset -j $jobs"
  cmake --build --preset "$preset" -j "$jobs"
}

stage_deps() {
  bash scripts/install_deps.sh
}

stage_release() {
  configure_and_build release
  step "test: ctest --preset release"
  rm -f build/release/isa_cases.txt
  OCTET_ISA_SUMMARY=$PWD/build/release/isa_cases.txt ctest --preset release -j "$jobs"
}

stage_install() {
  # build/release as the release stage left it (configured again here: cheap, and it works on its own too).
  step "configure: cmake --preset release"
  cmake --preset release >/dev/null
  local targets
  mapfile -t targets <build/release/octet_install_targets.txt
  step "build what the install needs: ${targets[*]}"
  cmake --build --preset release -j "$jobs" --target "${targets[@]}"

  tmp_root=$(mktemp -d "${TMPDIR:-/tmp}/octet-install.XXXXXX")
  local prefix=$tmp_root/prefix work=$tmp_root/work pc_dir
  mkdir -p "$work"
  step "install: cmake --install build/release --prefix $prefix"
  cmake --install build/release --prefix "$prefix" >"$work/install.log"
  echo "installed $(grep -c '^-- Installing' "$work/install.log") files:" \
    "$(find "$prefix/include" -name '*.h' | wc -l) headers, $(find "$prefix" -name 'liboctet_*' | wc -l) libraries," \
    "$(find "$prefix/bin" -type f | wc -l) programs"
  [[ -f $prefix/share/octet/digits.csv.gz ]] || { echo "the demo's data is not installed in share/octet" >&2; return 1; }
  pc_dir=$(dirname "$(find "$prefix" -name octet.pc)")
  export PKG_CONFIG_PATH=$pc_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  local cxx_warnings=(-Wall -Wextra -Werror)

  # Every installed header, included together by a user's warning flags: the set is self-contained and clean.
  step "headers: one translation unit including all $(find "$prefix/include" -name '*.h' | wc -l) installed headers"
  (cd "$prefix/include/octet" && find . -name '*.h' | sort | sed 's|^\./|#include "|; s|$|"|') >"$work/all_headers.cc"
  # shellcheck disable=SC2046  # pkg-config's output is a list of flags
  c++ -std=c++20 "${cxx_warnings[@]}" -fsyntax-only "$work/all_headers.cc" $(pkg-config --cflags octet)

  local ex
  for ex in embedded_runner quantize_and_run; do
    step "example $ex: find_package(octet) with CMAKE_PREFIX_PATH=$prefix"
    cmake -S "examples/$ex" -B "$work/$ex" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_CXX_FLAGS="${cxx_warnings[*]}" >/dev/null
    cmake --build "$work/$ex"
  done
  step "example embedded_runner: c++ ... \$(pkg-config --cflags --libs octet-runtime)"
  # shellcheck disable=SC2046
  c++ -std=c++20 -O2 "${cxx_warnings[@]}" examples/embedded_runner/main.cc $(pkg-config --cflags --libs octet-runtime) \
    -o "$work/embedded_runner_pc"

  step "run: octet quantize (installed) the digits CNN, then embedded_runner and octet-runner on the .octet"
  local model=tests/data/models/digits_cnn.onnx images=tests/data/models/digits_cnn.input0.npy
  "$prefix/bin/octet" quantize "$model" --mode static --calib "image=$images" -o "$work/digits_cnn.octet"
  "$prefix/bin/octet-runner" "$work/digits_cnn.octet" "$work/runner_out" "image=$images"
  "$work/embedded_runner/embedded_runner" "$work/digits_cnn.octet" "$images" | tee "$work/embedded.txt"
  "$work/embedded_runner_pc" "$work/digits_cnn.octet" "$images" >"$work/embedded_pc.txt"
  cmp "$work/embedded.txt" "$work/embedded_pc.txt"
  # The runner's first printed logits are octet-runner's, to the 6 digits printed.
  /usr/bin/python3 - "$work/embedded.txt" "$work/runner_out/logits.npy" <<'PY'
import sys

import numpy as np

line = next(l for l in open(sys.argv[1]) if l.startswith("output logits: f32 [32, 10]: "))
printed = [float(v) for v in line.split(": ")[2].split() if v != "..."]
expected = np.load(sys.argv[2]).reshape(-1)[: len(printed)]
if len(printed) != 8 or not np.allclose(printed, expected, rtol=1e-5, atol=1e-5):
    sys.exit(f"embedded_runner printed {printed}, octet-runner wrote {expected.tolist()}")
print(f"embedded_runner's first {len(printed)} logits equal octet-runner's")
PY

  local site
  site=$(find "$prefix" -path '*-packages/octet/__init__.py' -printf '%h\n' | head -n 1)
  if [[ -n $site ]]; then
    step "python: import octet from the prefix ($(dirname "$site")) and run the digits CNN"
    PYTHONPATH=$(dirname "$site") /usr/bin/python3 - "$model" "$images" "$prefix" <<'PY'
import sys

import numpy as np

import octet

if not octet.__file__.startswith(sys.argv[3]):
    sys.exit(f"imported octet from {octet.__file__}, not from the prefix {sys.argv[3]}")
model = octet.load(sys.argv[1])
y = model.run({"image": np.load(sys.argv[2])})[model.outputs[0]]
print(f"octet {octet.__version__} from {octet.__file__}: output {y.shape}")
PY
  fi

  step "run: quantize_and_run (SQNR >= 20 dB), then embedded_runner on the .octet it wrote"
  "$work/quantize_and_run/quantize_and_run" -o "$work/small_cnn.octet" "$work/small_cnn_x.npy"
  "$work/embedded_runner/embedded_runner" "$work/small_cnn.octet" "$work/small_cnn_x.npy"

  rm -rf "$tmp_root"
  tmp_root=""
}

stage_clang() {
  configure_and_build clang
  step "test: ctest --preset clang"
  ctest --preset clang -j "$jobs"
}

stage_aarch64() {
  configure_and_build aarch64
  rm -f build/aarch64/isa_cases.txt
  step "test under qemu-aarch64 -cpu max: ctest --preset aarch64"
  OCTET_ISA_SUMMARY=$PWD/build/aarch64/isa_cases.txt ctest --preset aarch64 -j "$jobs"
  step "test under qemu-aarch64 -cpu cortex-a53: ctest --preset aarch64-cortex-a53"
  OCTET_ISA_SUMMARY=$PWD/build/aarch64/isa_cases.txt ctest --preset aarch64-cortex-a53 -j "$jobs"
}

stage_asan() {
  configure_and_build asan
  # The asan test preset sets these too; exported here as well so the log shows them.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
  step "test: ctest --preset asan (ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS)"
  ctest --preset asan -j "$jobs"
}

stage_fuzz() {
  # The fuzz targets live in the asan build (CMakePresets.json); after the asan stage this configure and build are
  # no-ops, and the fuzz stage also works on its own.
  step "configure: cmake --preset asan"
  cmake --preset asan >/dev/null
  # tests/fuzz/CMakeLists.txt lists every fuzz target, one per line: executable, seed corpus folder, dictionary or "-".
  local manifest=build/asan/fuzz_targets.tsv
  [ -s "$manifest" ] || { echo "run_all_tests: $manifest is missing or empty: no fuzz targets" >&2; return 1; }
  local bin seeds dict names=()
  while IFS=$'\t' read -r bin seeds dict; do names+=("$(basename "$bin")"); done <"$manifest"
  step "build: cmake --build --preset asan -j $jobs --target ${names[*]}"
  cmake --build --preset asan -j "$jobs" --target "${names[@]}"

  tmp_root=$(mktemp -d "${TMPDIR:-/tmp}/octet-fuzz.XXXXXX")
  export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
  # The fuzzers run at the same time, each for its full $fuzz_seconds (they are single-threaded; on 2 cores three
  # of them share the CPU, so each gets fewer executions than alone, but every one runs for the whole time).
  local pids=() names_run=() works=() starts=()
  while IFS=$'\t' read -r bin seeds dict; do
    local name work args=()
    name=$(basename "$bin")
    work="$tmp_root/$name"
    mkdir -p "$work/corpus" "$work/artifacts"
    # The seeds are copied so that libFuzzer's new inputs never land in the source tree.
    cp -R "$seeds/." "$work/corpus/"
    [ "$dict" = "-" ] || args+=("-dict=$dict")
    step "fuzz $name for ${fuzz_seconds}s from $(find "$work/corpus" -type f | wc -l) seeds ($seeds)"
    "$bin" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "${args[@]}" \
      -artifact_prefix="$work/artifacts/" "$work/corpus" </dev/null >"$work/log" 2>&1 &
    pids+=($!) names_run+=("$name") works+=("$work") starts+=("$SECONDS")
    echo "$bin" >"$work/bin"
  done <"$manifest"
  local i failed=0
  for i in "${!pids[@]}"; do
    local name=${names_run[$i]} work=${works[$i]}
    if ! wait "${pids[$i]}"; then
      tail -n 80 "$work/log"
      echo "fuzz target $name FAILED; reproducer(s), replay with: $(cat "$work/bin") <file>"
      local a
      for a in "$work/artifacts"/*; do
        [ -f "$a" ] || continue
        echo "$a:"
        od -A d -t x1 "$a" | head -n 16 || true
      done
      failed=1
      continue
    fi
    grep -E '^(Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/log" || tail -n 3 "$work/log"
    echo "fuzz $name: no findings in $((SECONDS - ${starts[$i]}))s; corpus grew to $(find "$work/corpus" -type f | wc -l) inputs"
  done
  return $failed
}

# One line per ISA tier: tested, with the kernel cases the suite ran on it (tests/main.cc counts them), or skipped and
# why. x86 tiers come from the release stage's ctest, aarch64 tiers from the two qemu runs.
print_isa_summary() {
  local isa file where cases compiled runnable
  for isa in scalar avx2 avxvnni avx512vnni amx neon neondot i8mm; do
    case $isa in
      neon | neondot | i8mm) file=build/aarch64/isa_cases.txt where="aarch64 under qemu" ;;
      *) file=build/release/isa_cases.txt where="x86 release" ;;
    esac
    if [ ! -s "$file" ]; then
      printf '  %-11s skipped: the %s stage did not run\n' "$isa" "$where"
      continue
    fi
    read -r cases compiled runnable < <(awk -v isa="$isa" '$1 == isa { c += $2; if ($3) k = 1; if ($4) r = 1 }
                                                           END { print c + 0, k + 0, r + 0 }' "$file")
    if [ "$compiled" = 0 ]; then
      printf '  %-11s skipped: not compiled into the %s build\n' "$isa" "$where"
    elif [ "$runnable" = 0 ]; then
      printf '  %-11s skipped: this CPU (%s) cannot run it; run the kernel tests on one that can\n' "$isa" "$where"
    elif [ "$cases" = 0 ]; then
      printf '  %-11s skipped: runnable, but no kernel test ran on it (%s)\n' "$isa" "$where"
    else
      printf '  %-11s tested: %s kernel cases (%s)\n' "$isa" "$cases" "$where"
    fi
  done
}

main() {
  local stages=("$@") s stage_start stage_cpu
  [ $# -gt 0 ] || stages=("${default_stages[@]}")
  for s in "${stages[@]}"; do
    case " ${all_stages[*]} " in
      *" $s "*) ;;
      *) echo "run_all_tests: unknown stage '$s' (stages: ${all_stages[*]})" >&2; exit 2 ;;
    esac
  done
  trap on_exit EXIT

  for s in "${stages[@]}"; do
    current=$s
    stage_start=$SECONDS
    stage_cpu=$(cpu_seconds)
    banner "stage $s"
    "stage_$s"
    timings+=("$s $((SECONDS - stage_start)) $(($(cpu_seconds) - stage_cpu))")
    printf '\nstage %s passed in %ss\n' "$s" $((SECONDS - stage_start))
  done
  current=summary

  banner "summary: every stage passed (${stages[*]})"
  print_timings
  printf '\nISA tiers the kernel tests ran on:\n'
  print_isa_summary
  # The run ends with ctest's own summary of the x86 release entries that run octet_tests (quick: the suite is
  # already built): its Catch2 runner draws a fresh random seed each run, so a seed-dependent failure has a second
  # chance to show. The other entries (the command's scripts, ONNX Runtime, Chromium) have no seed to vary; they
  # passed in the release stage, and running them again would only repeat that (about half the rerun's time).
  if [[ " ${stages[*]} " == *" release "* ]]; then
    current="release (final ctest run)"
    local seeded
    seeded=$(ctest --test-dir build/release --show-only=json-v1 | /usr/bin/python3 -c '
import json, sys
names = [t["name"] for t in json.load(sys.stdin)["tests"] if any("octet_tests" in a for a in t.get("command", []))]
print("^(" + "|".join(names) + ")$" if names else "")')
    [ -n "$seeded" ] || { echo "run_all_tests: no ctest entry of build/release runs octet_tests" >&2; return 1; }
    banner "x86 release suite: the entries that run octet_tests, with a fresh seed (ctest --test-dir build/release)"
    ctest --test-dir build/release -j "$jobs" --output-on-failure -R "$seeded"
  fi
}

# Everything runs from main, so bash has read the whole file before it starts (editing it mid-run is harmless).
main "$@"
exit
