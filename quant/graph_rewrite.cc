// Helpers for graph passes.
#include "quant/graph_rewrite.h"

#include <fmt/format.h>

namespace octet {

std::vector<int> CountUses(const Graph& graph) {
  std::vector<int> uses(static_cast<size_t>(graph.num_values()), 0);
  for (const Node& n : graph.nodes()) {
    for (ValueId v : n.inputs) {
      if (v != kNoValue) ++uses[static_cast<size_t>(v)];
    }
  }
  for (ValueId v : graph.outputs()) ++uses[static_cast<size_t>(v)];
  return uses;
}

std::string UniqueValueName(const Graph& graph, const std::string& base) {
  if (graph.FindValue(base) == kNoValue) return base;
  for (int i = 1;; ++i) {
    std::string name = fmt::format("{}_{}", base, i);
    if (graph.FindValue(name) == kNoValue) return name;
  }
}

void RemoveNodes(Graph& graph, const std::vector<bool>& remove) {
  std::vector<Node>& nodes = graph.mutable_nodes();
  std::vector<Node> kept;
  kept.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!remove[i]) kept.push_back(std::move(nodes[i]));
  }
  nodes = std::move(kept);
}

int WeightRank(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs[1] == kNoValue) return 0;
  const Value& w = g.value(n.inputs[1]);
  return w.kind == ValueKind::kConstant ? w.data.shape().rank() : 0;
}

}  // namespace octet
