// The NHWC layout pass: groups the values that must share a layout (a QAdd's operands and result), then marks a
// group NHWC when every value in it can be produced and consumed NHWC (a QMaxPool's input and output likewise).
#include "ops/int8/nhwc_layout.h"

#include <numeric>
#include <utility>
#include <vector>

#include "core/op_table.h"

namespace octet::int8_ops {
namespace {

bool IsQConv2d(const Graph& g, const Node& n) {
  if (!IsInt8Op(n, Int8Op::kQConv) || n.inputs.size() < 2 || n.inputs[1] == kNoValue) return false;
  const Value& w = g.value(n.inputs[1]);
  return w.kind == ValueKind::kConstant && w.shape.has_value() && w.shape->rank() == 4;
}

bool IsGlobalPool(const Node& n) {
  return IsInt8Op(n, Int8Op::kQGlobalAveragePool) || IsInt8Op(n, Int8Op::kQGlobalMaxPool);
}

// Whether `n` can read its input `slot` stored NHWC (a QAdd only together with its other operand, see the groups).
bool ReadsNhwc(const Graph& g, const Node& n, size_t slot) {
  if (IsQConv2d(g, n) || IsGlobalPool(n) || IsInt8Op(n, Int8Op::kQMaxPool)) return slot == 0;
  return IsInt8Op(n, Int8Op::kQAdd) && slot < 2;
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(static_cast<size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) {
    while (parent[static_cast<size_t>(x)] != x) x = parent[static_cast<size_t>(x)];
    return x;
  }
  void Join(int a, int b) { parent[static_cast<size_t>(Find(a))] = Find(b); }
};

}  // namespace

Graph PlanNhwcLayout(const Graph& graph, int* nhwc_values) {
  Graph g = graph;
  const int num_values = g.num_values();
  const std::vector<int> producers = g.Producers();
  // Per value: whether it may be stored NHWC as far as its producer and consumers are concerned.
  std::vector<bool> ok(static_cast<size_t>(num_values), false);
  for (int v = 0; v < num_values; ++v) {
    const int p = producers[static_cast<size_t>(v)];
    if (p < 0) continue;
    const Node& n = g.node(p);
    ok[static_cast<size_t>(v)] = !n.outputs.empty() && n.outputs[0] == v && n.outputs.size() == 1 &&
                                 (IsQConv2d(g, n) || IsInt8Op(n, Int8Op::kQAdd) || IsInt8Op(n, Int8Op::kQMaxPool));
  }
  for (const ValueId v : g.outputs()) {
    if (v != kNoValue) ok[static_cast<size_t>(v)] = false;
  }
  UnionFind groups(num_values);
  for (const Node& n : g.nodes()) {
    for (size_t s = 0; s < n.inputs.size(); ++s) {
      const ValueId v = n.inputs[s];
      if (v != kNoValue && !ReadsNhwc(g, n, s)) ok[static_cast<size_t>(v)] = false;
    }
    if (IsInt8Op(n, Int8Op::kQAdd) && n.inputs.size() == 2 && n.outputs.size() == 1 && n.inputs[0] != kNoValue &&
        n.inputs[1] != kNoValue && n.outputs[0] != kNoValue) {
      groups.Join(n.inputs[0], n.outputs[0]);
      groups.Join(n.inputs[1], n.outputs[0]);
    }
    // A max pool keeps its input's layout (its input is NHWC only when produced by the operators above, so 4-D).
    if (IsInt8Op(n, Int8Op::kQMaxPool) && n.inputs.size() == 1 && n.outputs.size() == 1 && n.inputs[0] != kNoValue &&
        n.outputs[0] != kNoValue) {
      groups.Join(n.inputs[0], n.outputs[0]);
    }
  }
  // A group is NHWC only when all of its values are.
  std::vector<bool> group_ok(static_cast<size_t>(num_values), true);
  for (int v = 0; v < num_values; ++v) {
    if (!ok[static_cast<size_t>(v)]) group_ok[static_cast<size_t>(groups.Find(v))] = false;
  }
  auto nhwc = [&](ValueId v) -> int64_t {
    return v != kNoValue && ok[static_cast<size_t>(v)] && group_ok[static_cast<size_t>(groups.Find(v))] ? 1 : 0;
  };
  int count = 0;
  for (int v = 0; v < num_values; ++v) count += static_cast<int>(nhwc(v));
  for (Node& n : g.mutable_nodes()) {
    const bool pool = IsGlobalPool(n) || IsInt8Op(n, Int8Op::kQMaxPool);
    if (IsInt8Op(n, Int8Op::kQConv) || IsInt8Op(n, Int8Op::kQAdd) || pool) {  // stale marks of an earlier plan
      n.attributes.Erase(kNhwcInputAttribute);
      n.attributes.Erase(kNhwcOutputAttribute);
      n.attributes.Erase(kNhwcAttribute);
    }
    if (IsQConv2d(g, n)) {
      if (nhwc(n.inputs[0])) n.attributes.Set(kNhwcInputAttribute, int64_t{1});
      if (nhwc(n.outputs[0])) n.attributes.Set(kNhwcOutputAttribute, int64_t{1});
    } else if (IsGlobalPool(n) && !n.inputs.empty()) {
      if (nhwc(n.inputs[0])) n.attributes.Set(kNhwcInputAttribute, int64_t{1});
    } else if ((IsInt8Op(n, Int8Op::kQAdd) || IsInt8Op(n, Int8Op::kQMaxPool)) && n.outputs.size() == 1) {
      if (nhwc(n.outputs[0])) n.attributes.Set(kNhwcAttribute, int64_t{1});
    }
  }
  if (nhwc_values != nullptr) *nhwc_values = count;
  return g;
}

}  // namespace octet::int8_ops
