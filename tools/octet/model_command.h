// `octet run` and `octet inspect`: run a float model on .npy inputs, print a model's graph.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/executor.h"
#include "core/graph.h"
#include "core/status.h"
#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet run MODEL.onnx --input NAME=FILE.npy... --output-dir DIR [--isa TIER] [--threads T]
//     runs the model and writes DIR/<output name>.npy for every graph output, the name made safe for the file
//     system (characters other than letters, digits, '.', '-' and '_' become '_'; a leading '.' too). Input shapes
//     come from the files. All outputs are computed before any is written; each is written atomically, and a
//     failure removes the ones already written. (.octet models will be accepted once that format exists.)
//   octet inspect MODEL.onnx [--input-shape NAME=D0,D1,...]...
//     prints the graph: inputs, outputs, and one line per node with its op, inputs, output shapes and parameter
//     count, then the totals. Shapes need every input dim known (declared, or given with --input-shape).
void AddModelCommands(CLI::App& app, CommandRegistry& registry);

// Loads a model by its extension: .onnx where the build has ONNX import; .octet is refused until that format exists.
Result<Graph> LoadModel(const std::string& path);
// Parses --input-shape values, NAME=D0,D1,..., into options.input_shapes.
Status ParseInputShapes(const std::vector<std::string>& specs, CompileOptions& options);

}  // namespace octet::cli
