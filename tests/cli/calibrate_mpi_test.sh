#!/usr/bin/env bash
# `mpirun -np 4 octet calibrate --mpi` on the digits CNN (issue 19): the state rank 0 writes is byte-identical to one
# process over all the data, for every exactly mergeable observer, and so is the .octet made from it; an
# order-dependent observer is refused; `octet sensitivity --mpi` gives one process's report. Exit 77 (skipped) when octet was built without MPI or mpirun is missing.
# Usage: calibrate_mpi_test.sh OCTET MODELS_DIR WITH_MPI (CMake's OCTET_WITH_MPI: ON or OFF)
set -uo pipefail
octet=$1
models=$2
[ "$3" = "ON" ] || { echo "octet built without MPI (OCTET_WITH_MPI $3): skipped"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/octet-calibrate-mpi-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
# OpenMPI refuses to run as root without --allow-run-as-root; --oversubscribe: 4 ranks on fewer cores.
mpi=(mpirun --oversubscribe -np 4)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
# In the ASan build, the ranks run without LeakSanitizer: OpenMPI keeps allocations until exit by design (reported
# from its MCA components, unloaded by then, so no suppression can name them). ASan's other checks stay on, and the
# single-process runs of calibrate_cli and sensitivity_cli keep leak detection.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

/usr/bin/python3 - "$models" "$tmp" <<'PY'
import sys, numpy as np
np.save(sys.argv[2] + "/calib.npy", np.load(sys.argv[1] + "/digits_calib_x.npy").reshape(-1, 1, 8, 8))
PY
m="$models/digits_cnn.onnx"
data=(--calib "image=$tmp/calib.npy" --calib-batch 24)
for obs in minmax percentile entropy mse pow2_histogram; do
  "$octet" calibrate "$m" "${data[@]}" --activation-observer "$obs" --per-channel -o "$tmp/$obs.single.json" \
    >"$tmp/out" 2>&1 || fail "$obs: one process failed: $(cat "$tmp/out")"
  "${mpi[@]}" "$octet" calibrate "$m" "${data[@]}" --activation-observer "$obs" --per-channel --mpi \
    -o "$tmp/$obs.mpi.json" >"$tmp/out" 2>&1 || fail "$obs: mpirun -np 4 failed: $(cat "$tmp/out")"
  cmp -s "$tmp/$obs.single.json" "$tmp/$obs.mpi.json" || fail "$obs: the MPI state differs from one process's"
  "$octet" quantize "$m" --state "$tmp/$obs.mpi.json" --activation-observer "$obs" --per-channel \
    -o "$tmp/$obs.mpi.octet" >"$tmp/out" 2>&1 || fail "$obs: quantize --state failed: $(cat "$tmp/out")"
  "$octet" quantize "$m" --state "$tmp/$obs.single.json" --activation-observer "$obs" --per-channel \
    -o "$tmp/$obs.single.octet" >"$tmp/out" 2>&1 || fail "$obs: quantize --state failed: $(cat "$tmp/out")"
  cmp -s "$tmp/$obs.single.octet" "$tmp/$obs.mpi.octet" || fail "$obs: the .octet files differ"
done
out=$("${mpi[@]}" "$octet" calibrate "$m" "${data[@]}" --activation-observer histogram --mpi -o "$tmp/h.json" 2>&1)
[ $? -ne 0 ] || fail "HistogramObserver under --mpi was not refused"
grep -q "rebins its histogram" <<<"$out" || fail "the refusal lacks its reason: $out"
[ ! -e "$tmp/h.json" ] || fail "a refused MPI calibration wrote its output"

# `octet sensitivity --mpi`: the ranks share the per-node evaluations; rank 0's report (table and JSON) equals one
# process's. Latencies are timings, so they are left out (--latency-runs 0).
/usr/bin/python3 - "$models" "$tmp" <<'PY'
import sys, numpy as np
np.save(sys.argv[2] + "/test.npy", np.load(sys.argv[1] + "/digits_test_x.npy")[:120].reshape(-1, 1, 8, 8))
PY
sens=(sensitivity "$m" --calib "image=$tmp/calib.npy" --input "image=$tmp/test.npy" --latency-runs 0 --target-sqnr 40)
"$octet" "${sens[@]}" --json "$tmp/one.json" >"$tmp/one.txt" 2>&1 || fail "sensitivity failed: $(cat "$tmp/one.txt")"
"${mpi[@]}" "$octet" "${sens[@]}" --mpi --json "$tmp/mpi.json" >"$tmp/mpi.txt" 2>&1 ||
  fail "mpirun sensitivity --mpi failed: $(cat "$tmp/mpi.txt")"
cmp -s "$tmp/one.json" "$tmp/mpi.json" || fail "the sensitivity report under --mpi differs from one process's"
cmp -s "$tmp/one.txt" "$tmp/mpi.txt" || fail "the sensitivity table under --mpi differs: $(diff "$tmp/one.txt" "$tmp/mpi.txt")"
grep -q "all but this" "$tmp/one.txt" || fail "no sensitivity table: $(cat "$tmp/one.txt")"

[ "$failures" -eq 0 ] && echo "calibrate_mpi: all checks passed"
exit $((failures > 0))
