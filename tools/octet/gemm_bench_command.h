// `octet bench gemm`: the speed of the int8 GEMM operator, in the format ../shared/peers/compare reads.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds `gemm` under the existing `bench` subcommand of `app`:
//   octet bench gemm --m M --n N --k K [--output u8|int32] [--scheme fp32|q31|fbgemm] [--threads T] [--isa TIER]
//                    [--repetitions R] [--json]
// A (M x K, u8) times W (N x K, s8, per-tensor symmetric, prepacked outside the timing) through QGemmPlan, as the
// peer tool's oneDNN matmul: `u8` is a full quantized linear layer (activation zero point 117, s32 bias, one
// per-tensor output scale, output zero point 121, u8 out; fp32 requantization unless --scheme); `int32` is plain
// u8 x s8 -> s32 (no zero point, no bias). The output is checked once against ops/reference (every element for
// small shapes, else 300 samples and the corners) before timing; exit 1 on a difference. Timing as
// `octet bench quantize`: warm-up >= 20 ms, calls per repetition calibrated to >= 10 ms, R repetitions (default 5),
// median per call. With --json one object per line: {"op":"gemm", "m", "n", "k", "threads", "isa", "kernel",
// "output", "us", "gops", "us_min", "us_max", "repetitions", "calls_per_repetition", ...}, gops = 2 M N K / us / 1e3;
// "isa" is the tier of the kernel that ran (--isa is a cap).
void AddGemmBenchCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli
