// `octet compare`: the numeric suite (DESIGN.md §7) on a float ONNX model and its int8 .octet model.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet compare FLOAT.onnx QUANT.octet --input NAME=FILE.npy ... [--json R.json] [--html R.html]
//     [--allow NODE|OP ...] [--isa TIER] [--threads T]
// Every graph input needs at least one file; giving a name several times feeds several batches (each input the
// same number). Runs CompareWeights, CompareModelOutputs and CompareModelStub (the float model fused as Convert saw
// it) and prints one row per layer: weight, activation (propagated) and shadow SQNR, clipped fraction and int32
// accumulator headroom, then each model output's SQNR. --json writes the report (schema version 1,
// docs/report_schema.md), --html the same report as one self-contained HTML page; both are built before either is
// written, each written atomically.
void AddCompareCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli
