// QClamp folded into its int8 producer's output clamp (see fuse_int8_activation.h).
#include "quant/fuse_int8_activation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/op_table.h"
#include "core/verifier.h"
#include "ops/reference/fused_activation_reference.h"
#include "quant/graph_rewrite.h"

namespace octet {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A clamp as a real interval [min, max]; infinite ends are unbounded.
struct Interval {
  float min = -kInf, max = kInf;
};

// The int8 operators with an "activation" attribute (ops/int8/int8_ops.h).
bool CanTakeActivation(const Node& n) {
  for (Int8Op op : {Int8Op::kQConv, Int8Op::kQGemm, Int8Op::kQMatMul, Int8Op::kQAdd, Int8Op::kQMul}) {
    if (IsInt8Op(n, op)) return true;
  }
  return false;
}

// The producer's fused activation as an interval; nullopt when it is not one this pass knows how to combine.
std::optional<Interval> ActivationInterval(const AttributeMap& a) {
  auto activation = a.GetString("activation", "");
  if (!activation.ok()) return std::nullopt;
  if (activation->empty()) return Interval{};
  if (*activation == FloatOpName(FloatOp::kRelu)) return Interval{0.0f, kInf};
  if (*activation != FloatOpName(FloatOp::kClip)) return std::nullopt;
  auto min = a.GetFloat(reference::kActivationMinAttribute, -kInf);
  auto max = a.GetFloat(reference::kActivationMaxAttribute, kInf);
  if (!min.ok() || !max.ok()) return std::nullopt;
  return Interval{*min, *max};
}

// QClamp's bounds (attributes min and max); nullopt when malformed (left for the operator to report).
std::optional<Interval> ClampInterval(const Node& clamp) {
  auto min = clamp.attributes.GetFloat("min", -kInf);
  auto max = clamp.attributes.GetFloat("max", kInf);
  if (!min.ok() || !max.ok()) return std::nullopt;
  return Interval{*min, *max};
}

bool SameQParams(const std::optional<QParams>& a, const std::optional<QParams>& b) {
  if (!a.has_value() || !b.has_value()) return false;
  return a->scheme() == b->scheme() && a->dtype() == b->dtype() && a->quant_min() == b->quant_min() &&
         a->quant_max() == b->quant_max() && a->axis() == b->axis() && a->scales() == b->scales() &&
         a->zero_points() == b->zero_points();
}

void SetActivation(AttributeMap& a, const Interval& r) {
  a.Erase("activation");
  a.Erase(reference::kActivationMinAttribute);
  a.Erase(reference::kActivationMaxAttribute);
  if (r.min == -kInf && r.max == kInf) return;
  if (r.min == 0.0f && r.max == kInf) {  // Relu's bound is the zero point, which is the code of 0
    a.Set("activation", std::string(FloatOpName(FloatOp::kRelu)));
    return;
  }
  a.Set("activation", std::string(FloatOpName(FloatOp::kClip)));
  if (r.min != -kInf) a.Set(reference::kActivationMinAttribute, r.min);
  if (r.max != kInf) a.Set(reference::kActivationMaxAttribute, r.max);
}

}  // namespace

Result<int> FuseInt8Activations(Graph& graph) {
  const std::vector<int> uses = CountUses(graph);
  std::vector<int> producers = graph.Producers();
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  int fused = 0;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& clamp = graph.node(i);
    if (!IsInt8Op(clamp, Int8Op::kQClamp) || clamp.inputs.size() != 1 || clamp.outputs.size() != 1) continue;
    const ValueId x = clamp.inputs[0], y = clamp.outputs[0];
    if (x == kNoValue || y == kNoValue || uses[static_cast<size_t>(x)] != 1) continue;
    const int p = producers[static_cast<size_t>(x)];
    if (p < 0 || remove[static_cast<size_t>(p)]) continue;
    Node& producer = graph.mutable_node(p);
    if (!CanTakeActivation(producer) || producer.outputs.size() != 1 || producer.outputs[0] != x) continue;
    if (!SameQParams(graph.value(x).qparams, graph.value(y).qparams)) continue;
    const std::optional<Interval> have = ActivationInterval(producer.attributes);
    const std::optional<Interval> add = ClampInterval(clamp);
    if (!have || !add || std::isnan(add->min) || std::isnan(add->max)) continue;
    const Interval both{std::max(have->min, add->min), std::min(have->max, add->max)};
    if (!(both.min <= both.max)) continue;  // disjoint: the clamps do not commute into one
    SetActivation(producer.attributes, both);
    producer.outputs[0] = y;
    producers[static_cast<size_t>(y)] = p;
    remove[static_cast<size_t>(i)] = true;
    ++fused;
  }
  if (fused == 0) return 0;
  RemoveNodes(graph, remove);
  OCTET_RETURN_IF_ERROR(VerifyGraph(graph).WithContext("failed to fuse int8 activations"));
  return fused;
}

}  // namespace octet
