// The table of quantizable operators (see quantizable_ops.h).
#include "quant/quantizable_ops.h"

#include <string_view>

#include "core/float_op_table.h"
#include "quant/fused_ops.h"
#include "quant/graph_rewrite.h"

namespace octet {

QuantOpInfo LookupQuantOp(const Node& node, int weight_rank) {
  QuantOpInfo info;
  const bool fused = IsFusedNode(node);
  if (!node.domain.empty() && !fused) return info;
  const std::string_view op = node.op_type;
  const int n = static_cast<int>(node.inputs.size());
  if (OpIn(op, {FloatOp::kConv, FloatOp::kGemm, FloatOp::kMatMul}) && n >= 2) {
    info.kind = QuantOpKind::kWeighted;
    info.activation_inputs = {0};
    if (weight_rank == 0) {
      if (op != FloatOpName(FloatOp::kMatMul)) return QuantOpInfo{};  // a Conv/Gemm with computed weights stays float
      info.activation_inputs = {0, 1};
      info.kind = QuantOpKind::kGeneral;
      return info;
    }
    info.weight_input = 1;
    if (op == FloatOpName(FloatOp::kConv)) {
      info.weight_channel_axis = 0;
    } else if (op == FloatOpName(FloatOp::kGemm)) {
      const Attribute* t = node.attributes.Find("transB");
      const bool trans_b = t != nullptr && t->type() == AttrType::kInt && t->i() != 0;
      info.weight_channel_axis = trans_b ? 0 : 1;
    } else {
      info.weight_channel_axis = weight_rank - 1;  // MatMul: x @ W, W [..., K, N]
    }
    return info;
  }
  if (OpIn(op, {FloatOp::kAdd, FloatOp::kMul}) && n == 2) {
    info.kind = QuantOpKind::kGeneral;
    info.activation_inputs = {0, 1};
    return info;
  }
  if (OpIn(op, {FloatOp::kAveragePool, FloatOp::kGlobalAveragePool, FloatOp::kHardSwish, FloatOp::kLeakyRelu,
                FloatOp::kSigmoid, FloatOp::kTanh, FloatOp::kHardSigmoid, FloatOp::kSoftmax, FloatOp::kGelu,
                FloatOp::kLayerNormalization}) &&
      n >= 1) {
    info.kind = QuantOpKind::kGeneral;
    info.activation_inputs = {0};
    return info;
  }
  if (OpIn(op, {FloatOp::kMaxPool, FloatOp::kGlobalMaxPool, FloatOp::kRelu, FloatOp::kClip, FloatOp::kFlatten,
                FloatOp::kReshape, FloatOp::kSqueeze, FloatOp::kUnsqueeze, FloatOp::kTranspose, FloatOp::kIdentity,
                FloatOp::kDropout, FloatOp::kSplit}) &&
      n >= 1) {
    info.kind = QuantOpKind::kShared;
    info.activation_inputs = {0};
    return info;
  }
  if (op == FloatOpName(FloatOp::kConcat) && n >= 1) {
    info.kind = QuantOpKind::kShared;
    for (int i = 0; i < n; ++i) info.activation_inputs.push_back(i);
    return info;
  }
  return info;
}

}  // namespace octet
