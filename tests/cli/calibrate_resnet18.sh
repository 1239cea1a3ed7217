#!/usr/bin/env bash
# Sharded calibration of ResNet-18 (issue 19), run by hand: for MinMax, per-channel MinMax, percentile, entropy, MSE
# and the power-of-two histogram, 4 shards (`--shard I/4` then `octet merge`) and `mpirun -np 4 --mpi` give a state
# byte-identical to one process over all the data, and `octet quantize --state` makes the same .octet from each.
# Not a CTest entry: ResNet-18 is made by tests/data/models/generate.py --large, which needs torch and torchvision
# (never a test dependency), and the 3 x 6 calibrations take minutes on 2 cores; calibrate_cli_test.sh and
# calibrate_mpi_test.sh check the same on the digits CNN in CI. The MPI part is skipped without mpirun.
# Usage: calibrate_resnet18.sh OCTET [RESNET18.onnx] [SAMPLES (8)]   (batches of 1: the export fixes the batch at 1)
set -uo pipefail
octet=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/octet-calibrate-resnet18.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
model=${2:-}
samples=${3:-8}
if [ -z "$model" ]; then
  /usr/bin/python3 "$here/tests/data/models/generate.py" --large "$tmp/models" >/dev/null || exit 1
  model="$tmp/models/resnet18.onnx"
fi
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
run() {
  local out
  out=$("$@" 2>&1) || { fail "'$*' failed: $out"; return 1; }
}
same() { cmp -s "$1" "$2" || fail "$3: '$1' and '$2' differ"; }
mpi=()
if command -v mpirun >/dev/null 2>&1; then
  mpi=(mpirun --oversubscribe -np 4)
  [ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
else
  echo "mpirun not found: the --mpi runs are skipped"
fi

# Normal images, seeded: the values only need ranges that differ between shards.
/usr/bin/python3 - "$tmp" "$samples" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(19)
np.save(sys.argv[1] + "/calib.npy", rng.standard_normal((int(sys.argv[2]), 3, 224, 224), dtype=np.float32))
PY
data=(--calib "image=$tmp/calib.npy" --calib-batch 1)
for flags in "--activation-observer minmax" "--activation-observer minmax --per-channel" \
             "--activation-observer percentile" "--activation-observer entropy" "--activation-observer mse" \
             "--activation-observer pow2_histogram"; do
  read -r -a f <<<"$flags"
  d="$tmp/${f[1]}${f[2]:-}"
  mkdir -p "$d"
  start=$SECONDS
  run "$octet" calibrate "$model" "${data[@]}" "${f[@]}" -o "$d/single.json" || continue
  one=$((SECONDS - start))
  start=$SECONDS
  for i in 0 1 2 3; do run "$octet" calibrate "$model" "${data[@]}" "${f[@]}" --shard "$i/4" -o "$d/s$i.json"; done
  run "$octet" merge "$d/s3.json" "$d/s1.json" "$d/s0.json" "$d/s2.json" -o "$d/merged.json" || continue
  shards=$((SECONDS - start))
  same "$d/single.json" "$d/merged.json" "$flags: 4 shards merged vs one process"
  run "$octet" quantize "$model" --state "$d/single.json" "${f[@]}" -o "$d/single.octet"
  run "$octet" quantize "$model" --state "$d/merged.json" "${f[@]}" -o "$d/merged.octet"
  same "$d/single.octet" "$d/merged.octet" "$flags: .octet from the merged state vs one process"
  mpi_s=-
  if [ ${#mpi[@]} -gt 0 ]; then
    start=$SECONDS
    run "${mpi[@]}" "$octet" calibrate "$model" "${data[@]}" "${f[@]}" --mpi -o "$d/mpi.json" || continue
    mpi_s=$((SECONDS - start))
    same "$d/single.json" "$d/mpi.json" "$flags: mpirun -np 4 --mpi vs one process"
    run "$octet" quantize "$model" --state "$d/mpi.json" "${f[@]}" -o "$d/mpi.octet"
    same "$d/single.octet" "$d/mpi.octet" "$flags: .octet from the MPI state vs one process"
  fi
  echo "$flags: one process ${one} s, 4 shards + merge ${shards} s, mpirun -np 4 ${mpi_s} s"
done

[ "$failures" -eq 0 ] && echo "calibrate_resnet18: all checks passed ($samples samples, batches of 1)"
exit $((failures > 0))
