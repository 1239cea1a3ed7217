// `octet bench conv`: the speed of the int8 convolution operator, in the format ../shared/peers/compare reads.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds `conv` under the existing `bench` subcommand of `app`:
//   octet bench conv --c-in C --c-out C --h H --w W --kh K --kw K [--stride S] [--pad P] [--groups G]
//                    [--scheme fp32|q31|fbgemm] [--threads T] [--isa TIER] [--repetitions R] [--json]
// Batch 1, NHWC u8 input (zero point 117), OHWI s8 weights (per-tensor symmetric, prepacked outside the timing),
// s32 bias, one per-tensor output scale, output zero point 121, u8 out, as the peer tool's oneDNN convolution.
// The output is checked against ops/reference (every element for small problems, else 300 samples and the corners)
// before timing; exit 1 on a difference. Timing as `octet bench gemm`. With --json one object per line:
// {"op":"conv", "c_in", "c_out", "h", "w", "kh", "kw", "stride", "pad", "groups", "threads", "isa", "kernel",
// "path", "us", "gops", ...}, gops = 2 OH OW c_out (c_in / groups) kh kw / us / 1e3; "isa" is the tier of the
// kernel that ran (--isa is a cap).
void AddConvBenchCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli
