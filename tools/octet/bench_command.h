// `octet bench quantize|dequantize`: the speed of the quantize and dequantize kernels, in the format
// ../shared/peers/compare reads.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds `bench quantize` and `bench dequantize`:
//   octet bench quantize|dequantize [--elements N] [--threads T] [--isa TIER] [--dtype quint8|qint8|qint32]
//                                   [--repetitions R] [--json]
// f32 -> int (or back), per-tensor affine, scale 0.05 and zero point 117. The kernel the context selects runs over
// preallocated buffers, split over the context's threads in fixed tiles as ops/quantize does. The output is checked
// once against ops/reference before timing (exit 1 on any difference). Timing: warm-up >= 20 ms, calls per
// repetition calibrated to >= 10 ms, R repetitions (default 5), the median per call. Prints one line; with --json
// one JSON object: {"op", "elements", "threads", "isa", "kernel", "dtype", "us", "us_min", "us_max",
// "repetitions", "calls_per_repetition", "bytes", "gbps", ...}, where bytes counts bytes read plus bytes written
// (5 per element for u8 and s8, 8 for s32) and gbps = bytes / us / 1000.
void AddBenchCommands(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli
