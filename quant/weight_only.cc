// QuantizeWeightOnly: s8 weight constants + Dequantize in front of the float operators.
#include "quant/weight_only.h"

#include <fmt/format.h>

#include "core/float_op_table.h"
#include "core/op_table.h"
#include "ops/int8/int8_ops.h"
#include "quant/fuse.h"
#include "quant/graph_rewrite.h"
#include "quant/weight_quantizer.h"

namespace octet {
namespace {

bool ConstantF32(const Graph& g, const Node& n, size_t slot) {
  if (slot >= n.inputs.size() || n.inputs[slot] == kNoValue) return false;
  const Value& v = g.value(n.inputs[slot]);
  return v.kind == ValueKind::kConstant && v.data.dtype() == DType::kF32;
}

// The weights of n that weight-only quantization replaces (none for other operators).
std::vector<WeightUseInfo> WeightsOf(const Graph& g, const Node& n) {
  if (!n.domain.empty()) return {};
  if ((n.op_type == FloatOpName(FloatOp::kConv) || n.op_type == FloatOpName(FloatOp::kGemm) ||
       n.op_type == FloatOpName(FloatOp::kMatMul)) &&
      ConstantF32(g, n, 1)) {
    const int rank = g.value(n.inputs[1]).data.shape().rank();
    if (n.op_type == FloatOpName(FloatOp::kConv)) return {{1, 0, "weight"}};
    if (n.op_type == FloatOpName(FloatOp::kMatMul)) return {{1, rank - 1, "weight"}};
    const Attribute* t = n.attributes.Find("transB");
    const bool trans_b = t != nullptr && t->type() == AttrType::kInt && t->i() != 0;
    return {{1, trans_b ? 0 : 1, "weight"}};
  }
  if ((n.op_type == FloatOpName(FloatOp::kLSTM) || n.op_type == FloatOpName(FloatOp::kGRU)) && ConstantF32(g, n, 1) &&
      ConstantF32(g, n, 2)) {
    return {{1, 1, "W"}, {2, 1, "R"}};
  }
  return {};
}

}  // namespace

Result<Graph> QuantizeWeightOnly(const Graph& float_graph, const QConfigMapping& mapping,
                                 const QuantizeWeightOnlyOptions& options, std::vector<std::string>* quantized) {
  OCTET_RETURN_IF_ERROR(mapping.Validate(&float_graph));
  Graph g = float_graph;
  FoldConstantNodes(g);  // weights exported as Constant nodes are weights too
  if (quantized != nullptr) quantized->clear();
  WeightQuantizer quantizer(options.context);
  std::map<ValueId, ValueId> dequantized;  // quantized constant -> Dequantize output
  const int num_nodes = g.num_nodes();     // the Dequantize nodes appended below are not visited
  for (int i = 0; i < num_nodes; ++i) {
    const std::optional<QConfig> q = mapping.QConfigFor(g.node(i));
    if (!q.has_value()) continue;
    const std::vector<WeightUseInfo> weights = WeightsOf(g, g.node(i));
    for (const WeightUseInfo& w : weights) {
      const Node node = g.node(i);
      OCTET_ASSIGN_OR_RETURN(ValueId qw, quantizer.Quantize(g, node, node.inputs[static_cast<size_t>(w.slot)],
                                                            q->weight, w.axis));
      auto it = dequantized.find(qw);
      if (it == dequantized.end()) {
        const std::string out_name = UniqueValueName(g, g.value(node.inputs[static_cast<size_t>(w.slot)]).name +
                                                            "_dequantized");
        OCTET_ASSIGN_OR_RETURN(ValueId out, g.AddNodeValue(out_name, DType::kF32));
        Node dq;
        dq.name = fmt::format("{}.{}_dequantize", node.name, w.role);
        dq.op_type = Int8OpName(Int8Op::kDequantize);
        dq.domain = std::string(kInt8Domain);
        dq.inputs = {qw};
        dq.outputs = {out};
        OCTET_RETURN_IF_ERROR(g.AddNode(std::move(dq)).status());
        it = dequantized.emplace(qw, out).first;
      }
      g.mutable_node(i).inputs[static_cast<size_t>(w.slot)] = it->second;
    }
    if (!weights.empty() && quantized != nullptr) quantized->push_back(g.node(i).name);
  }
  OCTET_RETURN_IF_ERROR(g.SortTopologically());
  return g.WithoutUnusedConstants();  // the float weights that were replaced
}

}  // namespace octet
