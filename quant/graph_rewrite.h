// Small helpers the rewriting passes share: who uses a value, fresh names, removing nodes.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"

namespace octet {

// For each value: how many node input slots use it, plus one if it is a graph output.
std::vector<int> CountUses(const Graph& graph);
// `base`, or "base_1", "base_2", ... : the first name no value has.
std::string UniqueValueName(const Graph& graph, const std::string& base);
// Removes the nodes whose flag is set (values stay; orphaned ones are unused).
void RemoveNodes(Graph& graph, const std::vector<bool>& remove);

}  // namespace octet
