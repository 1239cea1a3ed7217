// Static dtype inference and the run-time float values of a graph (see
// float_values.h).
#include "quant/float_values.h"

#include <string_view>

#include "core/float_op_table.h"
#include "quant/graph_rewrite.h"

namespace octet {
namespace {

// ONNX TensorProto element types: FLOAT 1, UINT8 2, INT8 3, BOOL 9; everything
// else that octet runs is an integer.
DType FromOnnxElemType(int64_t t) {
  switch (t) {
    case 1:
      return DType::kF32;
    case 2:
      return DType::kU8;
    case 3:
      return DType::kS8;
    case 9:
      return DType::kU8;
    default:
      return DType::kS32;
  }
}

DType OutputDType(const Node &n, size_t slot, const std::vector<DType> &dtypes) {
  auto input = [&](size_t k) {
    return k < n.inputs.size() && n.inputs[k] != kNoValue ? dtypes[static_cast<size_t>(n.inputs[k])] : DType::kF32;
  };
  if (n.domain.empty()) {
    const std::string_view op = n.op_type;
    // NonZero, IsNaN and IsInf are in no op table (octet does not run them) but are ONNX's.
    using F = FloatOp;
    if (OpIn(op, {F::kShape, F::kSize, F::kArgMax, F::kArgMin}) || op == "NonZero") return DType::kS32;
    if (op == FloatOpName(FloatOp::kTopK)) return slot == 1 ? DType::kS32 : input(0);
    if (OpIn(op, {F::kEqual, F::kLess, F::kGreater, F::kLessOrEqual, F::kGreaterOrEqual, F::kNot, F::kAnd, F::kOr,
                  F::kXor}) ||
        OpIn(op, {"IsNaN", "IsInf"})) {
      return DType::kU8;
    }
    if (op == FloatOpName(FloatOp::kCast)) {
      const Attribute *to = n.attributes.Find("to");
      return to != nullptr && to->type() == AttrType::kInt ? FromOnnxElemType(to->i()) : DType::kS32;
    }
    if (op == FloatOpName(FloatOp::kConstant) || op == FloatOpName(FloatOp::kConstantOfShape)) {
      const Attribute *v = n.attributes.Find("value");
      if (v != nullptr && v->type() == AttrType::kTensor) return v->t().dtype();
      if (n.attributes.Find("value_int") != nullptr || n.attributes.Find("value_ints") != nullptr) {
        return DType::kS32;
      }
      return DType::kF32;
    }
    if (op == FloatOpName(FloatOp::kWhere)) return input(1);
  }
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (n.inputs[k] != kNoValue) return input(k);
  }
  return DType::kF32;
}

}  // namespace

std::vector<DType> InferValueDTypes(const Graph &graph) {
  std::vector<DType> dtypes(static_cast<size_t>(graph.num_values()), DType::kF32);
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    const Value &val = graph.value(v);
    if (val.kind == ValueKind::kConstant) {
      dtypes[static_cast<size_t>(v)] = val.data.dtype();
    } else if (val.kind == ValueKind::kInput) {
      dtypes[static_cast<size_t>(v)] = val.dtype;
    }
  }
  for (const Node &n : graph.nodes()) {  // nodes are in topological order (VerifyGraph)
    for (size_t s = 0; s < n.outputs.size(); ++s) {
      if (n.outputs[s] != kNoValue) dtypes[static_cast<size_t>(n.outputs[s])] = OutputDType(n, s, dtypes);
    }
  }
  return dtypes;
}

std::vector<bool> RuntimeFloatValues(const Graph &graph) {
  const std::vector<DType> dtypes = InferValueDTypes(graph);
  const size_t num_values = static_cast<size_t>(graph.num_values());
  // Values known at Compile: constants, and outputs of nodes whose inputs all
  // are (the executor folds them).
  std::vector<bool> folded(num_values, false);
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    folded[static_cast<size_t>(v)] = graph.value(v).kind == ValueKind::kConstant;
  }
  for (const Node &n : graph.nodes()) {
    bool all = true;
    for (ValueId in : n.inputs) {
      if (in != kNoValue && !folded[static_cast<size_t>(in)]) all = false;
    }
    for (ValueId out : n.outputs) {
      if (out != kNoValue) folded[static_cast<size_t>(out)] = all;
    }
  }
  std::vector<bool> out(num_values, false);
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    const bool constant = graph.value(v).kind == ValueKind::kConstant;
    out[static_cast<size_t>(v)] =
        dtypes[static_cast<size_t>(v)] == DType::kF32 && (constant || !folded[static_cast<size_t>(v)]);
  }
  return out;
}

}  // namespace octet
