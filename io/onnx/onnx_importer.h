// ONNX import: reads an ONNX model (opsets 7 to 21 of the default domain, adapted by
// opset_adapters.h) into an octet Graph, validating
// everything itself rather than trusting ONNX's checker. Library octet_onnx, the only part of octet that links
// protobuf; it is absent from builds without Debian's libonnx-dev (the aarch64 cross build).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/graph.h"
#include "core/op_registry.h"
#include "core/status.h"

namespace octet {

struct QdqImportReport;  // io/onnx/qdq_import.h

// Opsets 1 to 6 are read for the ops whose schema opset 7 kept; opset_adapters.h rewrites the rest.
inline constexpr int64_t kMinOnnxOpset = 1;
inline constexpr int64_t kMaxOnnxOpset = 21;

struct OnnxImportOptions {
  // Operators the graph may use; nodes with other ops are listed together in one error. Null: the float
  // operators (ops/float/registry.h).
  const OpRegistry* registry = nullptr;
  // The folder of the model file: external tensor data is read from files inside it (never outside it, symbolic
  // links resolved). Empty: external data is refused.
  std::string model_dir;
  // Rewrite QuantizeLinear / DequantizeLinear groups with constant qparams into octet's int8 operators
  // (io/onnx/qdq_import.h); the graph then runs with QuantizedGraphRegistry(). False: keep the ONNX ops as written.
  bool recognize_qdq = true;
  // When set, receives what the recognition did and which nodes stayed float, and why.
  QdqImportReport* qdq_report = nullptr;
};

// Converts a serialized ModelProto. `name` (usually the path) names the model in errors, which read
// "failed to import ONNX model '<name>': <what>, <where>". What is checked:
//  - the bytes parse as a ModelProto of at most 2 GiB; ir_version 3 to 10; the default domain is imported at an opset
//    in [1, 21], each node rewritten into the form octet's operators read (opset_adapters.h);
//  - tensors (initializers, Constant values): a supported element type (float, uint8, int8, int32, bool as u8,
//    int64 as s32 with values saturated to the int32 range), dims >= 0 with an overflow-checked element count,
//    exactly one data source whose length matches the dims (raw_data bytes, typed fields, or external data confined
//    to `model_dir`);
//  - graph inputs: tensors with a rank; each dim >= 0 or dynamic (a dim_param, no value, or -1), read as
//    kUnknownDim with its dim_param kept in Value::dim_names;
//  - names: every value defined once (graph inputs, initializers, node outputs), every node input and graph output
//    defined, node names unique (empty ones become "<op_type>_<index>");
//  - attributes: unique names, a declared type matching the field that holds the value;
//  - nodes form no cycle (they are sorted topologically); the graph passes VerifyGraph.
// Every node whose op (or an attribute kind such as a subgraph) octet does not support is listed in one
// Unimplemented error: "... 3 unsupported node(s): 'loop1' (Loop), ...".
// Operator semantics (arity, attribute values, axes, shapes) are checked when the graph is compiled.
Result<Graph> ImportOnnxModel(std::span<const std::byte> bytes, std::string_view name,
                              const OnnxImportOptions& options = {});

// Reads the file at `path` and imports it with model_dir set to the file's folder (unless options sets one).
Result<Graph> ReadOnnxModel(const std::string& path, OnnxImportOptions options = {});

}  // namespace octet
