// Dynamic input dims for the command line: `octet inspect` prints symbolic shapes ("[batch, 10]"), `octet bench
// model` binds each dynamic dim to 1. The executor's shape inference stays on concrete int64 dims; symbolic shapes
// are recovered by compiling with different values for the dynamic dims and comparing (symbolic_shapes.cc says how).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/op_registry.h"
#include "core/status.h"

namespace octet::cli {

// A dim of a graph input that is unknown (kUnknownDim) and not fixed by the given input shapes.
struct DynamicDim {
  std::string input;  // the input's name
  int dim = 0;
  std::string symbol;  // the ONNX dim_param (made printable), or "?" when unnamed
};

// The dynamic dims of `graph`'s inputs that `given` (shapes from --input files or --input-shape) leaves open, in
// input and dim order.
std::vector<DynamicDim> FindDynamicDims(const Graph& graph, const CompileOptions& given);

// `given` plus a shape for every input with dynamic dims, each such dim set to value(dim).
CompileOptions BindDynamicDims(const Graph& graph, const CompileOptions& given,
                               const std::function<int64_t(const DynamicDim&)>& value);

// The --input-shape argument for `input` with its dynamic dims set to value(dim): "x=1,64".
std::string InputShapeArgument(const Graph& graph, const std::string& input, const CompileOptions& given,
                               const std::function<int64_t(const DynamicDim&)>& value);

struct SymbolicShapes {
  // Compiled with every dynamic dim = 1, or why it failed.
  Result<Executor> exec = Status(StatusCode::kInternal, "not compiled");
  // The distinct symbols of the dynamic dims ("?" for all unnamed ones), in first-seen order.
  std::vector<std::string> symbols;
  // Per value id, when exec is ok: each dim as printed. A number; a symbol or a product with a factor ("batch",
  // "35*batch", "batch*seq") when the dim is exactly that; "?" when it depends on an unnamed dim or is no such
  // product (e.g. a strided conv over a dynamic height).
  std::vector<std::vector<std::string>> dims;
  // Non-empty when the dims could not be told apart (the model does not compile with other values): then `dims`
  // shows every dynamic dim as 1, and this says so.
  std::string note;
};

// Compiles `graph` with its dynamic dims bound (several times when it has any) and labels every value's dims.
SymbolicShapes InferSymbolicShapes(const Graph& graph, const Context& context, const OpRegistry& registry,
                                   const CompileOptions& given);

// "[batch, 1, 8, 8]".
std::string FormatDims(const std::vector<std::string>& dims);

}  // namespace octet::cli
