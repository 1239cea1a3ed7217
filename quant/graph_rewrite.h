// Small helpers the rewriting passes share: who uses a value, fresh names, removing nodes.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/float_op_table.h"
#include "core/graph.h"

namespace octet {

// For each value: how many node input slots use it, plus one if it is a graph output.
std::vector<int> CountUses(const Graph& graph);
// `base`, or "base_1", "base_2", ... : the first name no value has.
std::string UniqueValueName(const Graph& graph, const std::string& base);
// Removes the nodes whose flag is set (values stay; orphaned ones are unused).
void RemoveNodes(Graph& graph, const std::vector<bool>& remove);
// The rank of node `n`'s weight (input 1) when it is a constant, else 0 (no weight, or one computed at run time).
int WeightRank(const Graph& g, const Node& n);
// Whether op type `op` is one of `ops`.
inline bool OpIn(std::string_view op, std::initializer_list<std::string_view> ops) {
  for (std::string_view o : ops) {
    if (o == op) return true;
  }
  return false;
}
// Whether op type `op` is one of the float operators `ops`.
inline bool OpIn(std::string_view op, std::initializer_list<FloatOp> ops) {
  for (FloatOp o : ops) {
    if (FloatOpName(o) == op) return true;
  }
  return false;
}

}  // namespace octet
