#!/usr/bin/env bash
# Whole-model thread scaling: `octet bench model` on ResNet-18 and MobileNetV2, float and int8, at each thread count,
# for one or two octet binaries interleaved (ratios from one run). Models from
# `python3 tests/data/models/generate.py --large DIR`; the int8 models are made here with the first binary.
#
#   scripts/bench_thread_scaling.sh MODELS_DIR "1 4 16" OCTET [BASELINE_OCTET] [ROUNDS]
set -euo pipefail
dir=$1
threads=$2
new=$3
base=${4:-}
rounds=${5:-3}
for m in resnet18 mobilenet_v2; do
  if [ ! -f "$dir/$m.int8.octet" ]; then
    "$new" quantize "$dir/$m.onnx" --calib "image=$dir/$m.input0.npy" --no-guard -o "$dir/$m.int8.octet" >/dev/null
  fi
done
bins=("new=$new")
[ -n "$base" ] && bins+=("base=$base")
echo "round model threads binary median_us min_us"
for r in $(seq 1 "$rounds"); do
  for model in resnet18.onnx resnet18.int8.octet mobilenet_v2.onnx mobilenet_v2.int8.octet; do
    for t in $threads; do
      for b in "${bins[@]}"; do
        out=$("${b#*=}" bench model "$dir/$model" --threads "$t" --repetitions 9 2>&1)
        med=$(grep -o '[0-9.]* us median' <<<"$out" | cut -d' ' -f1)
        min=$(grep -o '(min [0-9.]*' <<<"$out" | cut -d' ' -f2)
        echo "$r $model $t ${b%%=*} $med $min"
      done
    done
  done
done
