// `octet bench model`: whole-model float latency, and where the time goes by operator type.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds `model` under the existing `bench` sub-app of `app` (AddBenchCommands must have run first):
//   octet bench model MODEL.onnx [--input-shape NAME=D0,D1,...]... [--input NAME=FILE.npy]... [--threads T]
//                     [--isa TIER] [--repetitions R] [--per-op] [--json]
// Input shapes come from --input-shape, --input files, or the model; a dim left dynamic (a dim_param such as
// "batch", or unnamed) is set to 1, with one line on stderr naming the input, the dim and the option that sets it.
// Compiles the model once (shape inference, packing and kernel choice are outside the timing), feeds the --input
// files' data, and seeded uniform [-1, 1) floats to the other f32 inputs and zeros to integer inputs, checks that
// one run succeeds with finite outputs, then times Run: warm-up >= 20 ms, calls per repetition calibrated to >= 10 ms, R repetitions (default
// 5), the median per call; then the median over R runs of the calling thread's CPU time per run ("cpu_us": with
// one thread every node runs on the calling thread, and on a shared machine CPU time counts only the time the
// model had a core). Correctness of the outputs is what the [onnx] tests check against PyTorch; here a
// failed run or a non-finite output is exit 1. Prints one line; with --json one JSON object
// {"op": "model", "model", "threads", "enabled_isas", "us", "us_min", "us_max", "repetitions",
//  "cpu_us", "calls_per_repetition", "nodes", "arena_bytes"}. --per-op adds, from R further runs timed per node through
// the executor's hooks, one line (object) per op type: {"op": "model_op", "op_type", "nodes", "us", "cpu_us",
// "share", "kernels"}, where us (cpu_us) is the mean wall (calling thread's CPU) time per run in that op type's
// nodes.
void AddModelBenchCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli
