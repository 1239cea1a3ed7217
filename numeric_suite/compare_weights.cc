// CompareWeights: float weights against dequantized int8 weights, matched by node name and input slot.
#include "numeric_suite/compare_weights.h"

#include <algorithm>

#include "core/op_table.h"
#include "numeric_suite/graph_matching.h"

namespace octet {

int WeightChannelAxis(const Node& node, const Tensor& weight, const QParams& qparams) {
  if (qparams.per_channel()) return qparams.axis();
  const int rank = weight.shape().rank();
  const std::string& op = node.op_type;
  // By substring, so the int8 forms (QMatMul, DynamicQLSTM, ...) count too.
  const auto names = [&op](FloatOp f) { return op.find(FloatOpName(f)) != std::string::npos; };
  if (names(FloatOp::kLSTM) || names(FloatOp::kGRU)) return std::min(1, rank - 1);
  if (names(FloatOp::kMatMul)) return std::max(0, rank - 1);
  if (names(FloatOp::kGemm)) {
    const Result<int64_t> trans_b = node.attributes.GetInt("transB", 0);
    if (trans_b.ok() && *trans_b == 0) return std::max(0, rank - 1);
  }
  return 0;
}

Result<std::vector<WeightComparison>> CompareWeights(const Graph& float_graph, const Graph& quantized) {
  std::vector<WeightComparison> out;
  for (int i = 0; i < quantized.num_nodes(); ++i) {
    const Node& node = quantized.node(i);
    if (IsInt8Op(node, Int8Op::kDequantize)) continue;  // its consumer reports the weight
    const int f = float_graph.FindNode(node.name);
    if (f < 0) continue;
    const Node& float_node = float_graph.node(f);
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      const ValueId q = QuantizedConstantInput(quantized, i, slot);
      if (q == kNoValue) continue;
      const Value& qv = quantized.value(q);
      if (slot >= float_node.inputs.size() || float_node.inputs[slot] == kNoValue ||
          float_graph.value(float_node.inputs[slot]).kind != ValueKind::kConstant ||
          float_graph.value(float_node.inputs[slot]).dtype != DType::kF32) {
        return InvalidArgument("failed to compare weight '{}' of node '{}' ({}): input {} of the float node is not an "
                               "f32 constant",
                               qv.name, node.name, node.op_type, slot);
      }
      const Value& fv = float_graph.value(float_node.inputs[slot]);
      if (fv.data.shape() != qv.data.shape()) {
        return InvalidArgument("failed to compare weight '{}' of node '{}' ({}): float weight '{}' has shape {}, the "
                               "int8 weight {}",
                               qv.name, node.name, node.op_type, fv.name, fv.data.shape(), qv.data.shape());
      }
      WeightComparison w;
      w.name = fv.name;
      w.node = node.name;
      w.op = node.op_type;
      w.slot = slot;
      w.float_weight = fv.data;
      w.quantized = qv.data;
      w.qparams = *qv.qparams;
      w.channel_axis = WeightChannelAxis(node, qv.data, w.qparams);
      OCTET_ASSIGN_OR_RETURN(w.dequantized, DequantizedCopy(qv.data, &*qv.qparams, qv.name));
      out.push_back(std::move(w));
    }
  }
  return out;
}

}  // namespace octet
