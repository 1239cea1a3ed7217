// QuantizeDynamic: the float operators with constant weights become dynamic int8 operators.
#include "quant/dynamic.h"

#include <fmt/format.h>

#include "core/float_op_table.h"
#include "core/op_table.h"
#include "ops/int8/int8_ops.h"
#include "quant/fuse.h"
#include "quant/weight_quantizer.h"

namespace octet {
namespace {

const Value* ConstantInput(const Graph& g, const Node& n, size_t slot) {
  if (slot >= n.inputs.size() || n.inputs[slot] == kNoValue) return nullptr;
  const Value& v = g.value(n.inputs[slot]);
  return v.kind == ValueKind::kConstant && v.data.dtype() == DType::kF32 ? &v : nullptr;
}

int64_t IntAttr(const Node& n, const char* name, int64_t def) {
  const Attribute* a = n.attributes.Find(name);
  return a != nullptr && a->type() == AttrType::kInt ? a->i() : def;
}

float FloatAttr(const Node& n, const char* name, float def) {
  const Attribute* a = n.attributes.Find(name);
  return a != nullptr && a->type() == AttrType::kFloat ? a->f() : def;
}

// The dynamic operator for node n and the weights to quantize, or why it stays float.
struct DynamicPlan {
  std::string op_type;
  std::vector<WeightUseInfo> weights;
  std::string why_not;
};

DynamicPlan PlanNode(const Graph& g, const Node& n) {
  DynamicPlan p;
  if (!n.domain.empty()) return p;
  if (n.op_type == FloatOpName(FloatOp::kGemm)) {
    const Value* w = ConstantInput(g, n, 1);
    if (w == nullptr || w->data.shape().rank() != 2) {
      p.why_not = "the weight (input 1) is not a constant f32 matrix";
    } else if (IntAttr(n, "transA", 0) != 0 || FloatAttr(n, "alpha", 1.0f) != 1.0f ||
               FloatAttr(n, "beta", 1.0f) != 1.0f) {
      p.why_not = "DynamicQGemm needs transA = 0 and alpha = beta = 1";
    } else {
      const bool trans_b = IntAttr(n, "transB", 0) != 0;
      const int64_t out = w->data.shape().dim(trans_b ? 0 : 1);
      if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
        const Value* c = ConstantInput(g, n, 2);
        if (c == nullptr || (c->data.shape() != Shape{out} && c->data.shape() != Shape{1, out})) {
          p.why_not = fmt::format("the bias (input 2) is not a constant of shape [{}]", out);
          return p;
        }
      }
      p.op_type = Int8OpName(Int8Op::kDynamicQGemm);
      p.weights.push_back({1, trans_b ? 0 : 1, "weight"});
    }
    return p;
  }
  if (n.op_type == FloatOpName(FloatOp::kMatMul)) {
    const Value* w = ConstantInput(g, n, 1);
    if (ConstantInput(g, n, 0) != nullptr) return p;  // constant x: folded anyway
    if (w == nullptr || w->data.shape().rank() != 2) {
      p.why_not = "input 1 is not a constant f32 matrix";
      return p;
    }
    p.op_type = Int8OpName(Int8Op::kDynamicQMatMul);
    p.weights.push_back({1, 1, "weight"});
    return p;
  }
  if (n.op_type == FloatOpName(FloatOp::kLSTM) || n.op_type == FloatOpName(FloatOp::kGRU)) {
    if (ConstantInput(g, n, 1) == nullptr || ConstantInput(g, n, 2) == nullptr) {
      p.why_not = "W and R (inputs 1 and 2) are not both f32 constants";
      return p;
    }
    p.op_type = Int8OpName(*Int8OpFrom(n.op_type, /*dynamic=*/true));  // DynamicQLSTM, DynamicQGRU
    p.weights.push_back({1, 1, "W"});
    p.weights.push_back({2, 1, "R"});
  }
  return p;
}

}  // namespace

Result<Graph> QuantizeDynamic(const Graph& float_graph, const QConfigMapping& mapping,
                              const QuantizeDynamicOptions& options, QuantizeDynamicReport* report) {
  OCTET_RETURN_IF_ERROR(mapping.Validate(&float_graph));
  Graph g = float_graph;
  FoldConstantNodes(g);  // weights exported as Constant nodes are weights too
  QuantizeDynamicReport local;
  QuantizeDynamicReport& rep = report != nullptr ? *report : local;
  rep = {};
  WeightQuantizer quantizer(options.context);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const std::optional<QConfig> q = mapping.QConfigFor(g.node(i));
    if (!q.has_value() || !q->is_dynamic()) continue;
    const DynamicPlan plan = PlanNode(g, g.node(i));
    if (plan.op_type.empty()) {
      if (!plan.why_not.empty()) rep.kept_float.push_back(fmt::format("{}: {}", g.node(i).name, plan.why_not));
      continue;
    }
    for (const WeightUseInfo& w : plan.weights) {
      const Node node = g.node(i);  // a copy: Quantize adds values, the node's name stays valid
      OCTET_ASSIGN_OR_RETURN(ValueId qw, quantizer.Quantize(g, node, node.inputs[static_cast<size_t>(w.slot)],
                                                            q->weight, w.axis));
      g.mutable_node(i).inputs[static_cast<size_t>(w.slot)] = qw;
    }
    Node& n = g.mutable_node(i);
    n.op_type = plan.op_type;
    n.domain = std::string(kInt8Domain);
    n.attributes.Set("reduce_range", int64_t{options.reduce_range ? 1 : 0});
    if (options.per_token &&
        (n.op_type == Int8OpName(Int8Op::kDynamicQGemm) || n.op_type == Int8OpName(Int8Op::kDynamicQMatMul))) {
      n.attributes.Set("per_token", int64_t{1});
    }
    rep.quantized.push_back(n.name);
  }
  return g.WithoutUnusedConstants();  // the float weights that were replaced
}

}  // namespace octet
