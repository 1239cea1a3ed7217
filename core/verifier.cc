// Structural verification of a Graph.
#include "core/verifier.h"

#include <unordered_map>
#include <vector>

namespace octet {
namespace {

bool HasControlCharacters(const std::string& s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

}  // namespace

Status VerifyGraph(const Graph& graph) {
  const std::string where = fmt::format("failed to verify graph '{}'", graph.name());
  const size_t num_values = static_cast<size_t>(graph.num_values());

  std::unordered_map<std::string, ValueId> value_names;
  for (ValueId id = 0; id < graph.num_values(); ++id) {
    const Value& v = graph.value(id);
    if (v.name.empty()) return InvalidArgument("{}: value #{} has an empty name", where, id);
    if (HasControlCharacters(v.name)) {
      return InvalidArgument("{}: value name '{}' contains control characters", where, v.name);
    }
    if (!value_names.emplace(v.name, id).second) {
      return InvalidArgument("{}: two values are named '{}'", where, v.name);
    }
    if (v.kind == ValueKind::kConstant) {
      if (v.data.dtype() != v.dtype || !v.shape || *v.shape != v.data.shape()) {
        return InvalidArgument("{}: constant '{}' declares {} {} but holds {} {}", where, v.name, v.dtype,
                               v.shape ? v.shape->ToString() : "(no shape)", v.data.dtype(), v.data.shape());
      }
    }
    if (v.kind == ValueKind::kInput && !v.shape) {
      return InvalidArgument("{}: input '{}' has no shape", where, v.name);
    }
    // A node value's dtype is only a hint until shape inference; Compile checks its qparams against the inferred one.
    if (v.qparams && v.kind != ValueKind::kNode) {
      if (v.qparams->dtype() != v.dtype) {
        return InvalidArgument("{}: value '{}' is {} but its qparams are {}", where, v.name, v.dtype,
                               v.qparams->dtype());
      }
      if (v.kind == ValueKind::kConstant) {
        if (Status st = v.qparams->ValidateFor(v.data.shape(), v.name); !st.ok()) return st.WithContext(where);
      }
    }
  }

  std::vector<bool> is_input(num_values, false);
  for (ValueId id : graph.inputs()) {
    if (id < 0 || id >= graph.num_values() || graph.value(id).kind != ValueKind::kInput) {
      return InvalidArgument("{}: graph input {} is not an input value", where, QuotedValueName(graph, id));
    }
    if (is_input[static_cast<size_t>(id)]) {
      return InvalidArgument("{}: input '{}' is listed twice", where, graph.value(id).name);
    }
    is_input[static_cast<size_t>(id)] = true;
  }
  for (ValueId id = 0; id < graph.num_values(); ++id) {
    if (graph.value(id).kind == ValueKind::kInput && !is_input[static_cast<size_t>(id)]) {
      return InvalidArgument("{}: value '{}' is an input but not listed among the graph inputs", where,
                             graph.value(id).name);
    }
  }

  // Producers: exactly one node per kNode value, none for the others.
  std::vector<int> producer(num_values, -1);
  std::unordered_map<std::string, int> node_names;
  for (int n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    if (node.name.empty()) return InvalidArgument("{}: node #{} ({}) has an empty name", where, n, node.op_type);
    if (HasControlCharacters(node.name)) {
      return InvalidArgument("{}: node name '{}' contains control characters", where, node.name);
    }
    if (!node_names.emplace(node.name, n).second) {
      return InvalidArgument("{}: two nodes are named '{}' ({} and {})", where, node.name,
                             graph.node(node_names[node.name]).op_type, node.op_type);
    }
    if (node.op_type.empty()) return InvalidArgument("{}: node '{}' has no op type", where, node.name);
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      if (out < 0 || out >= graph.num_values()) {
        return InvalidArgument("{}: node '{}' has output id {} out of range", where, node.name, out);
      }
      const Value& v = graph.value(out);
      if (v.kind != ValueKind::kNode) {
        return InvalidArgument("{}: node '{}' ({}) writes {} '{}'", where, node.name, node.op_type,
                               ValueKindName(v.kind), v.name);
      }
      int& p = producer[static_cast<size_t>(out)];
      if (p >= 0) {
        return InvalidArgument("{}: value '{}' is produced by two nodes, '{}' and '{}'", where, v.name,
                               graph.node(p).name, node.name);
      }
      p = n;
    }
  }

  // Order: each input must be available when its node runs.
  for (int n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      const ValueId in = node.inputs[slot];
      if (in == kNoValue) continue;
      if (in < 0 || in >= graph.num_values()) {
        return InvalidArgument("{}: node '{}' has input id {} out of range", where, node.name, in);
      }
      const Value& v = graph.value(in);
      if (v.kind != ValueKind::kNode) continue;
      const int p = producer[static_cast<size_t>(in)];
      if (p < 0) {
        return InvalidArgument("{}: node '{}' ({}) input {} '{}' is not defined: no node produces it and it is "
                               "neither a graph input nor a constant",
                               where, node.name, node.op_type, slot, v.name);
      }
      if (p == n) {
        return InvalidArgument("{}: node '{}' ({}) reads its own output '{}' (a cycle)", where, node.name,
                               node.op_type, v.name);
      }
      if (p > n) {
        // Tell a cycle from a mere ordering problem: sorting a copy finds cycles.
        Graph copy = graph;
        Status sorted = copy.SortTopologically();
        if (!sorted.ok()) return InvalidArgument("{}: {}", where, sorted.message());
        return InvalidArgument("{}: node '{}' ({}) uses '{}' before node '{}' produces it (the nodes are not in "
                               "topological order)",
                               where, node.name, node.op_type, v.name, graph.node(p).name);
      }
    }
  }

  if (graph.outputs().empty()) return InvalidArgument("{}: the graph has no outputs", where);
  for (ValueId out : graph.outputs()) {
    if (out < 0 || out >= graph.num_values()) {
      return InvalidArgument("{}: graph output id {} out of range", where, out);
    }
    const Value& v = graph.value(out);
    if (v.kind == ValueKind::kNode && producer[static_cast<size_t>(out)] < 0) {
      return InvalidArgument("{}: graph output '{}' is not produced by any node", where, v.name);
    }
  }
  return OkStatus();
}

}  // namespace octet
