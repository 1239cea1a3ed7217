// The float fusion pass (ops/float/float_fusion.h): finds Conv/Gemm -> Relu/Clip pairs and merges them.
#include "ops/float/float_fusion.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/float_op_table.h"

namespace octet::float_ops {
namespace {

// Whether `n` is a producer the pass can fuse into: a Gemm, or a Conv whose weight is a constant of rank 3 or 4
// (the 1-D/2-D paths, which apply the activation; 3-D goes elsewhere).
bool CanFuseInto(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1 || n.outputs[0] == kNoValue) return false;
  if (n.attributes.Has(kFusedActivationAttribute)) return false;
  if (IsFloatOp(n, FloatOp::kGemm)) return true;
  if (!IsFloatOp(n, FloatOp::kConv) || n.inputs.size() < 2 || n.inputs[1] == kNoValue) return false;
  const Value& w = g.value(n.inputs[1]);
  return w.kind == ValueKind::kConstant && w.dtype == DType::kF32 &&
         (w.data.shape().rank() == 3 || w.data.shape().rank() == 4);
}

// A Clip bound: nullopt for a bound that cannot be fused (not a constant f32 scalar), else its value (infinite when
// the input is omitted).
std::optional<float> ConstantBound(const Graph& g, const Node& n, size_t slot, float absent) {
  if (slot >= n.inputs.size() || n.inputs[slot] == kNoValue) return absent;
  const Value& v = g.value(n.inputs[slot]);
  if (v.kind != ValueKind::kConstant || v.dtype != DType::kF32 || v.data.NumElements() != 1) return std::nullopt;
  return v.data.values<float>()[0];
}

// The activation `n` computes, when it is a fusable Relu or Clip.
std::optional<FusedActivation> ActivationOf(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.inputs[0] == kNoValue || n.outputs.size() != 1 || n.outputs[0] == kNoValue) {
    return std::nullopt;
  }
  FusedActivation a;
  if (IsFloatOp(n, FloatOp::kRelu) && n.inputs.size() == 1) {
    a.kind = FusedActivation::Kind::kRelu;
    return a;
  }
  if (!IsFloatOp(n, FloatOp::kClip) || n.inputs.size() > 3) return std::nullopt;
  const std::optional<float> lo = ConstantBound(g, n, 1, -INFINITY), hi = ConstantBound(g, n, 2, INFINITY);
  // min > max or a NaN bound: leave the Clip to report (or compute) it itself.
  if (!lo || !hi || !(*lo <= *hi)) return std::nullopt;
  a.kind = FusedActivation::Kind::kClip;
  a.lo = *lo;
  a.hi = *hi;
  return a;
}

}  // namespace

Graph FuseFloatActivations(const Graph& graph, int* fused) {
  Graph g = graph;
  const int num_values = g.num_values();
  std::vector<int> consumers(static_cast<size_t>(num_values), 0);
  for (const Node& n : g.nodes()) {
    for (const ValueId v : n.inputs) {
      if (v != kNoValue) ++consumers[static_cast<size_t>(v)];
    }
  }
  for (const ValueId v : g.outputs()) {
    if (v != kNoValue) consumers[static_cast<size_t>(v)] += 2;  // a graph output is never fused away
  }
  const std::vector<int> producers = g.Producers();
  std::vector<bool> removed(static_cast<size_t>(g.num_nodes()), false);
  int count = 0;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& act = g.node(i);
    const std::optional<FusedActivation> a = ActivationOf(g, act);
    if (!a) continue;
    const ValueId x = act.inputs[0];
    const int p = producers[static_cast<size_t>(x)];
    if (p < 0 || removed[static_cast<size_t>(p)] || consumers[static_cast<size_t>(x)] != 1) continue;
    Node& producer = g.mutable_node(p);
    if (producer.outputs[0] != x || !CanFuseInto(g, producer)) continue;
    const bool relu = a->kind == FusedActivation::Kind::kRelu;
    producer.attributes.Set(kFusedActivationAttribute,
                            std::string(FloatOpName(relu ? FloatOp::kRelu : FloatOp::kClip)));
    if (!relu && std::isfinite(a->lo)) producer.attributes.Set(kFusedMinAttribute, a->lo);
    if (!relu && std::isfinite(a->hi)) producer.attributes.Set(kFusedMaxAttribute, a->hi);
    producer.outputs[0] = act.outputs[0];  // the fused node writes the activation's value; x is left unused
    removed[static_cast<size_t>(i)] = true;
    ++count;
  }
  if (count > 0) {
    std::vector<Node> kept;
    kept.reserve(static_cast<size_t>(g.num_nodes() - count));
    for (int i = 0; i < g.num_nodes(); ++i) {
      if (!removed[static_cast<size_t>(i)]) kept.push_back(std::move(g.mutable_node(i)));
    }
    g.mutable_nodes() = std::move(kept);
  }
  if (fused != nullptr) *fused = count;
  return g;
}

const char* ActivationSuffix(const FusedActivation& activation) {
  switch (activation.kind) {
    case FusedActivation::Kind::kRelu:
      return "+relu";
    case FusedActivation::Kind::kClip:
      return "+clip";
    default:
      return "";
  }
}

Result<FusedActivation> ReadFusedActivation(const AttributeMap& attributes) {
  FusedActivation a;
  if (!attributes.Has(kFusedActivationAttribute)) return a;
  OCTET_ASSIGN_OR_RETURN(std::string kind, attributes.GetString(kFusedActivationAttribute));
  if (kind == FloatOpName(FloatOp::kRelu)) {
    a.kind = FusedActivation::Kind::kRelu;
    return a;
  }
  if (kind != FloatOpName(FloatOp::kClip)) {
    return InvalidArgument("attribute {} must be '{}' or '{}', got '{}'", kFusedActivationAttribute,
                           FloatOpName(FloatOp::kRelu), FloatOpName(FloatOp::kClip), kind);
  }
  a.kind = FusedActivation::Kind::kClip;
  OCTET_ASSIGN_OR_RETURN(a.lo, attributes.GetFloat(kFusedMinAttribute, -INFINITY));
  OCTET_ASSIGN_OR_RETURN(a.hi, attributes.GetFloat(kFusedMaxAttribute, INFINITY));
  if (!(a.lo <= a.hi)) {
    return InvalidArgument("attributes {} {} and {} {}: the minimum must not exceed the maximum", kFusedMinAttribute,
                           a.lo, kFusedMaxAttribute, a.hi);
  }
  return a;
}

}  // namespace octet::float_ops
