// Per-operator rules of the test vectors (io/vectors/vectors.h): what each int8 operator records beside its
// inputs and outputs (int32 accumulators, requantization parameters, resolved geometry, lookup tables), and how its
// outputs are recomputed with the scalar reference kernels (ops/reference) from what was recorded. The arithmetic
// is the op-level references' (qconv_op_reference.h, qgemm_op_reference.h, quantize_reference.h, ...); this file
// reads and writes the records, dispatching on the op table's ids (core/op_table.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/graph_attribute.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::vectors {

// One tensor of a node's vectors. Primary tensors come from the run: role "input" (slot = the node's input slot),
// "weight" (slot 1 of QConv / QGemm / QMatMul), "bias" (slot 2) and "output" (slot = output slot), with the value's
// name and qparams. Derived tensors are computed by DeriveNodeVectors: "accumulator" (s32, the output's shape),
// "multiplier" (f32 per channel: fp32 and fbgemm), "q31_multiplier" and "q31_shift" (s32 per channel: q31),
// "bias_acc" (the bias in accumulator units, per channel: s32 for fp32 / q31, f32 for fbgemm) and "table" (s32
// [256], QLookup's codes indexed by the input byte).
struct VectorTensor {
  std::string role;
  int slot = 0;
  std::string value;  // graph value name; empty for derived tensors
  Tensor tensor;
  std::optional<QParams> qparams;
};

struct NodeVectors {
  int index = 0;  // the node's index in the graph
  std::string name;
  std::string op_type;
  std::string domain;
  std::string kernel;  // the kernel that ran (Executor::kernel_name)
  AttributeMap attributes;
  std::vector<VectorTensor> tensors;
  // Op-specific scalars: "requantization" (scheme, zero point, clamp bounds, scalar multipliers), "geometry"
  // (resolved kernel, strides, dilations, pads), "quantize", "clamp", "lookup", "concat".
  nlohmann::json params = nlohmann::json::object();

  const VectorTensor* Find(const std::string& role, int slot = 0) const;
};

// Whether the op has a reference replay (the int8 operators whose op table entry says reference = true: all but
// the dynamic ones; and the shape-only ONNX operators Reshape, Flatten, Squeeze, Unsqueeze, Identity and Transpose).
// Others are recorded with their inputs and outputs only.
bool HasReference(const std::string& domain, const std::string& op_type);

bool IsDerivedRole(const std::string& role);

// Appends the derived tensors and sets `params` from the primary tensors, their qparams and the attributes.
Status DeriveNodeVectors(NodeVectors& v);

// Recomputes `recorded` with the references: its derived tensors and params are derived again and must equal the
// recorded ones; then the outputs are computed from the recorded inputs, accumulators and parameters and must equal
// the recorded outputs. Integers and floats compare with == (floats bit for bit). The first mismatch is an error
// naming the node, the tensor, the flat element index (and the multi-index), the recorded and the reference value.
// `elements` (optional) receives how many output and accumulator elements were compared.
Status ReplayNode(const NodeVectors& recorded, int64_t* elements = nullptr);

}  // namespace octet::vectors
