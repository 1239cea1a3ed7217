// `octet run` and `octet inspect`: run a model (.onnx or .octet) on .npy inputs, print a model's graph.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/executor.h"
#include "core/graph.h"
#include "core/op_registry.h"
#include "core/status.h"
#include "io/octet_file.h"
#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet run MODEL --input NAME=FILE.npy... --output-dir DIR [--isa TIER] [--threads T]
//     runs the model and writes DIR/<output name>.npy for every graph output, the name made safe for the file
//     system (characters other than letters, digits, '.', '-' and '_' become '_'; a leading '.' too). Input shapes
//     come from the files. All outputs are computed before any is written; each is written atomically, and a
//     failure removes the ones already written.
//   octet inspect MODEL [--input-shape NAME=D0,D1,...]...
//     prints the graph: inputs, outputs, and one line per node with its op, inputs, output shapes and parameter
//     count, then the totals; for a .octet model also its format version and metadata, and the guard's figures
//     (metadata "guard", written by octet quantize) as FormatGuardReport text. Dims an input leaves dynamic (not
//     declared, not given with --input-shape) print symbolically: as the ONNX dim_param ("batch"), products of them
//     ("35*batch", "batch*seq"), or "?" for an unnamed dim and what cannot be so written
//     (tools/octet/symbolic_shapes.h); the arena size is then the one with every dynamic dim = 1.
// MODEL is an ONNX model (float operators) or a .octet model (QuantizedGraphRegistry: float, fused and int8
// operators), told apart by the .octet magic bytes or the .octet extension.
void AddModelCommands(CLI::App& app, CommandRegistry& registry);

// A model file's graph, and for .octet files their metadata and the registry their operators come from.
struct LoadedModel {
  Graph graph;
  bool is_octet = false;
  OctetMetadata metadata;
  uint32_t format_version = 0;  // .octet only
  // ONNX only: what QDQ import (io/onnx/qdq_import.h) left float, and why; empty for float models.
  std::vector<std::string> qdq_kept_float;
  int qdq_groups = 0;  // float operators QDQ import made int8
};

// Loads a .octet model (starting with the .octet magic, or named *.octet) or an ONNX model (where the build has
// ONNX import).
Result<LoadedModel> LoadModelFile(const std::string& path);
// The graph of LoadModelFile.
Result<Graph> LoadModel(const std::string& path);
// Whether `model` is quantized: a .octet model, or an ONNX model with int8 operators (its QDQ groups imported as
// such).
bool IsQuantizedModel(const LoadedModel& model);
// The registry that runs `model`: QuantizedGraphRegistry() for .octet models and ONNX models with int8 operators
// (quantized models import as such), FloatOpRegistry() for float ONNX models.
OpRegistry RegistryFor(const LoadedModel& model);
// "name=value" -> (name, value) for options such as --input and --calib; the name may itself contain '=' only if
// the value does not (split at the last). `option` names the option in the error.
Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text, const char* option);
// Parses --input-shape values, NAME=D0,D1,..., into options.input_shapes.
Status ParseInputShapes(const std::vector<std::string>& specs, CompileOptions& options);

}  // namespace octet::cli
