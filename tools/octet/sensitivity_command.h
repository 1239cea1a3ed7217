// `octet sensitivity`: which nodes of a statically quantized model cost the most accuracy, their int8 and float
// latency, and the smallest set of nodes to keep float for a target (numeric_suite/sensitivity.h; issue 9).
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet sensitivity MODEL.onnx --calib NAME=FILE.npy ... --input NAME=FILE.npy ... [--labels Y.npy]
//     [--target-sqnr DB | --target-accuracy A] [--backend x86|fbgemm|qnnpack|onednn|symmetric] [--profile P]
//     [--calib-batch N] [--input-batch N] [--node NODE ...] [--latency-runs R] [--json R.json] [--mpi]
//     [--isa TIER] [--threads T]
// Calibrates once on the --calib samples, then evaluates on the --input samples (both along axis 0, one file per
// graph input) with every node int8, every node float, each node alone int8 and each node alone float. The metric
// is the SQNR of the outputs against the float graph, or with --labels (one int label per --input sample) the top-1
// accuracy of output 0 in [0, 1]. Prints the nodes ranked (node, op, metric with only this node int8 and with all
// but this node int8, int8 and float latency of the node alone on one thread, on the first --input batch) and,
// with a target, the nodes to keep float and the metric they give, or that the target cannot be reached. --json writes the report (numeric-suite schema 1, its
// "sensitivity" section) atomically. Progress goes to stderr only when it is a terminal.
// --mpi (under mpirun, builds with MPI): each rank evaluates a share of the per-node configurations; rank 0 prints
// and writes the same report as one process (latencies aside, which are timed on rank 0).
void AddSensitivityCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli
