// Activation fusion (see fuse.h).
#include "quant/fuse.h"

#include <utility>

#include "core/float_op_table.h"
#include "quant/fold_batch_norm.h"
#include "quant/fuse_transformer.h"
#include "quant/fused_ops.h"
#include "quant/graph_rewrite.h"

namespace octet {

Result<std::vector<std::string>> FuseActivations(Graph& graph) {
  std::vector<std::string> fused;
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  const std::vector<int> producers = graph.Producers();
  const std::vector<int> uses = CountUses(graph);
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& relu = graph.node(i);
    if (relu.op_type != FloatOpName(FloatOp::kRelu) || !relu.domain.empty() || relu.inputs.size() != 1 ||
        relu.outputs.size() != 1) {
      continue;
    }
    const ValueId x = relu.inputs[0];
    if (x == kNoValue || uses[static_cast<size_t>(x)] != 1) continue;
    const int p_index = producers[static_cast<size_t>(x)];
    if (p_index < 0 || remove[static_cast<size_t>(p_index)]) continue;
    Node& p = graph.mutable_node(p_index);
    if (!p.domain.empty() || !CanFuseActivation(p.op_type) || p.outputs.size() != 1 || p.outputs[0] != x) continue;
    p.domain = std::string(kFusedDomain);
    p.attributes.Set(kActivationAttribute, std::string(FloatOpName(FloatOp::kRelu)));
    p.outputs[0] = relu.outputs[0];
    remove[static_cast<size_t>(i)] = true;
    fused.push_back(relu.name);
  }
  RemoveNodes(graph, remove);
  return fused;
}

std::vector<std::string> FoldConstantNodes(Graph& graph) {
  std::vector<std::string> folded;
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& node = graph.node(i);
    if (node.op_type != FloatOpName(FloatOp::kConstant) || !node.domain.empty() || node.outputs.size() != 1 ||
        node.outputs[0] == kNoValue || node.attributes.items().size() != 1) {
      continue;
    }
    const Attribute* a = node.attributes.Find("value");
    if (a == nullptr || a->type() != AttrType::kTensor) continue;  // value_float(s) / value_int(s) stay nodes
    Value& v = graph.mutable_value(node.outputs[0]);
    v.kind = ValueKind::kConstant;
    v.data = a->t();
    v.dtype = v.data.dtype();
    v.shape = v.data.shape();
    remove[static_cast<size_t>(i)] = true;
    folded.push_back(node.name);
  }
  RemoveNodes(graph, remove);
  return folded;
}

Result<FuseReport> Fuse(Graph& graph) {
  FuseReport report;
  report.folded_constant_nodes = FoldConstantNodes(graph);
  OCTET_ASSIGN_OR_RETURN(report.folded_batch_norms, FoldBatchNorm(graph));
  OCTET_ASSIGN_OR_RETURN(TransformerFuseReport transformer, FuseTransformerPatterns(graph));
  report.fused_layer_norms = std::move(transformer.layer_norms);
  report.fused_gelus = std::move(transformer.gelus);
  report.scale_divisions = std::move(transformer.scale_divisions);
  OCTET_ASSIGN_OR_RETURN(report.fused_activations, FuseActivations(graph));
  return report;
}

}  // namespace octet
