// BatchNorm folding (see fold_batch_norm.h for the formulas and when it applies).
#include "quant/fold_batch_norm.h"

#include <cmath>

#include "core/float_op_table.h"
#include "quant/graph_rewrite.h"

namespace octet {

namespace {

const Tensor* ConstantF32(const Graph& g, ValueId id) {
  if (id == kNoValue) return nullptr;
  const Value& v = g.value(id);
  if (v.kind != ValueKind::kConstant || v.data.dtype() != DType::kF32) return nullptr;
  return &v.data;
}

// What a fold needs from the node in front of the BatchNormalization.
struct FoldTarget {
  bool linear = false;        // Gemm: PyTorch's linear formula
  bool weight_rows = true;    // output channel o is row o of the weight (Conv; Gemm with transB = 1)
  int64_t channels = 0;
};

Result<bool> MatchTarget(const Graph& g, const Node& p, FoldTarget* t) {
  if (!p.domain.empty() || p.inputs.size() < 2) return false;
  const Tensor* w = ConstantF32(g, p.inputs[1]);
  if (w == nullptr) return false;
  const ValueId bias = p.inputs.size() > 2 ? p.inputs[2] : kNoValue;
  if (bias != kNoValue && ConstantF32(g, bias) == nullptr) return false;
  if (p.op_type == FloatOpName(FloatOp::kConv)) {
    if (w->shape().rank() < 3) return false;
    t->linear = false;
    t->weight_rows = true;
    t->channels = w->shape().dim(0);
  } else if (p.op_type == FloatOpName(FloatOp::kGemm)) {
    if (w->shape().rank() != 2) return false;
    OCTET_ASSIGN_OR_RETURN(float alpha, p.attributes.GetFloat("alpha", 1.0f));
    OCTET_ASSIGN_OR_RETURN(float beta, p.attributes.GetFloat("beta", 1.0f));
    OCTET_ASSIGN_OR_RETURN(int64_t trans_b, p.attributes.GetInt("transB", 0));
    if (alpha != 1.0f || beta != 1.0f) return false;
    t->linear = true;
    t->weight_rows = trans_b != 0;
    t->channels = w->shape().dim(t->weight_rows ? 0 : 1);
  } else {
    return false;
  }
  if (bias != kNoValue) {
    const Tensor& b = g.value(bias).data;
    if (b.shape().rank() != 1 || b.NumElements() != t->channels) return false;
  }
  return true;
}

// The constant to write for input `slot` of node `p`: the existing one when nothing else uses it, else a copy.
Result<ValueId> WritableConstant(Graph& g, Node& p, size_t slot, const std::vector<int>& uses, Tensor data,
                                 const std::string& fresh_name) {
  const ValueId old = slot < p.inputs.size() ? p.inputs[slot] : kNoValue;
  if (old != kNoValue && uses[static_cast<size_t>(old)] == 1) {
    g.mutable_value(old).data = std::move(data);
    g.mutable_value(old).shape = g.value(old).data.shape();
    return old;
  }
  OCTET_ASSIGN_OR_RETURN(ValueId id, g.AddConstant(UniqueValueName(g, fresh_name), std::move(data)));
  if (p.inputs.size() <= slot) p.inputs.resize(slot + 1, kNoValue);
  p.inputs[slot] = id;
  return id;
}

}  // namespace

Result<std::vector<std::string>> FoldBatchNorm(Graph& graph) {
  std::vector<std::string> folded;
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  const std::vector<int> producers = graph.Producers();
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& bn = graph.node(i);
    if (bn.op_type != FloatOpName(FloatOp::kBatchNormalization) || !bn.domain.empty() || bn.inputs.size() != 5)
      continue;
    if (bn.outputs.empty() || bn.outputs[0] == kNoValue) continue;
    bool extra_outputs = false;
    for (size_t k = 1; k < bn.outputs.size(); ++k) extra_outputs |= bn.outputs[k] != kNoValue;
    OCTET_ASSIGN_OR_RETURN(int64_t training, bn.attributes.GetInt("training_mode", 0));
    if (extra_outputs || training != 0) continue;
    const Tensor* gamma = ConstantF32(graph, bn.inputs[1]);
    const Tensor* beta = ConstantF32(graph, bn.inputs[2]);
    const Tensor* mean = ConstantF32(graph, bn.inputs[3]);
    const Tensor* var = ConstantF32(graph, bn.inputs[4]);
    if (!gamma || !beta || !mean || !var) continue;
    const ValueId x = bn.inputs[0];
    const int p_index = producers[static_cast<size_t>(x)];
    if (p_index < 0 || remove[static_cast<size_t>(p_index)]) continue;
    // Uses change as earlier folds add constants; count them now.
    const std::vector<int> uses = CountUses(graph);
    if (uses[static_cast<size_t>(x)] != 1) continue;
    FoldTarget t;
    OCTET_ASSIGN_OR_RETURN(bool match, MatchTarget(graph, graph.node(p_index), &t));
    if (!match) continue;
    const int64_t c = t.channels;
    if (gamma->NumElements() != c || beta->NumElements() != c || mean->NumElements() != c ||
        var->NumElements() != c) {
      continue;
    }
    OCTET_ASSIGN_OR_RETURN(float eps, bn.attributes.GetFloat("epsilon", 1e-5f));

    // Per-channel factor: Conv multiplies gamma by rsqrt first, Linear forms bn_scale; both are gamma * r.
    std::vector<float> r(static_cast<size_t>(c)), factor(static_cast<size_t>(c));
    for (int64_t o = 0; o < c; ++o) {
      r[o] = 1.0f / std::sqrt(var->data<float>()[o] + eps);
      factor[o] = gamma->data<float>()[o] * r[o];
    }
    Node& p = graph.mutable_node(p_index);
    const Tensor& w = graph.value(p.inputs[1]).data;
    OCTET_ASSIGN_OR_RETURN(Tensor w2, w.Clone());
    float* pw = w2.data<float>();
    if (t.weight_rows) {
      const int64_t per_row = w2.NumElements() / c;
      for (int64_t o = 0; o < c; ++o) {
        for (int64_t k = 0; k < per_row; ++k) pw[o * per_row + k] *= factor[o];
      }
    } else {
      const int64_t rows = w2.shape().dim(0);
      for (int64_t k = 0; k < rows; ++k) {
        for (int64_t o = 0; o < c; ++o) pw[k * c + o] *= factor[o];
      }
    }
    OCTET_ASSIGN_OR_RETURN(Tensor b2, Tensor::Create(DType::kF32, Shape{c}));
    const ValueId old_bias = p.inputs.size() > 2 ? p.inputs[2] : kNoValue;
    for (int64_t o = 0; o < c; ++o) {
      const float b = old_bias != kNoValue ? graph.value(old_bias).data.data<float>()[o] : 0.0f;
      const float centred = b - mean->data<float>()[o];
      b2.data<float>()[o] = t.linear ? centred * factor[o] + beta->data<float>()[o]
                                     : centred * r[o] * gamma->data<float>()[o] + beta->data<float>()[o];
    }
    const std::string pname = p.name;
    OCTET_RETURN_IF_ERROR(WritableConstant(graph, p, 1, uses, std::move(w2), pname + ".weight").status());
    OCTET_RETURN_IF_ERROR(WritableConstant(graph, graph.mutable_node(p_index), 2, uses, std::move(b2),
                                           pname + ".bias").status());
    graph.mutable_node(p_index).outputs[0] = graph.node(i).outputs[0];
    remove[static_cast<size_t>(i)] = true;
    folded.push_back(graph.node(i).name);
  }
  RemoveNodes(graph, remove);
  return folded;
}

}  // namespace octet
