// Graph construction, lookups, topological sort and the text dump.
#include "core/graph.h"

#include <algorithm>
#include <queue>

#include <fmt/ranges.h>

namespace octet {

const char* ValueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kInput: return "input";
    case ValueKind::kConstant: return "constant";
    case ValueKind::kNode: return "node output";
  }
  return "?";
}

std::string QuotedValueName(const Graph& graph, ValueId id) {
  if (id == kNoValue) return "(none)";
  if (id < 0 || id >= graph.num_values()) return fmt::format("#{}", id);
  return fmt::format("'{}'", graph.value(id).name);
}

Result<ValueId> Graph::AddValue(Value value) {
  if (value.name.empty()) return InvalidArgument("failed to add value to graph '{}': the name is empty", name_);
  if (value_index_.count(value.name) != 0) {
    return InvalidArgument("failed to add value '{}' to graph '{}': a value of that name exists", value.name, name_);
  }
  if (values_.size() >= static_cast<size_t>(INT32_MAX)) {
    return OutOfRange("failed to add value '{}' to graph '{}': too many values", value.name, name_);
  }
  const auto id = static_cast<ValueId>(values_.size());
  value_index_.emplace(value.name, id);
  values_.push_back(std::move(value));
  return id;
}

Result<ValueId> Graph::AddInput(const std::string& name, DType dtype, Shape shape) {
  for (int64_t d : shape.dims()) {
    if (d < 0 && d != kUnknownDim) {
      return InvalidArgument("failed to add input '{}': dimensions must be >= 0 or unknown, got {}", name, shape);
    }
  }
  Value v;
  v.name = name;
  v.kind = ValueKind::kInput;
  v.dtype = dtype;
  v.shape = std::move(shape);
  OCTET_ASSIGN_OR_RETURN(ValueId id, AddValue(std::move(v)));
  inputs_.push_back(id);
  return id;
}

Result<ValueId> Graph::AddConstant(const std::string& name, Tensor data) {
  Value v;
  v.name = name;
  v.kind = ValueKind::kConstant;
  v.dtype = data.dtype();
  v.shape = data.shape();
  v.data = std::move(data);
  return AddValue(std::move(v));
}

Result<ValueId> Graph::AddNodeValue(const std::string& name, DType dtype) {
  Value v;
  v.name = name;
  v.kind = ValueKind::kNode;
  v.dtype = dtype;
  return AddValue(std::move(v));
}

Result<int> Graph::AddNode(Node node) {
  for (const auto* ids : {&node.inputs, &node.outputs}) {
    for (ValueId id : *ids) {
      if (id != kNoValue && (id < 0 || id >= num_values())) {
        return InvalidArgument("failed to add node '{}' ({}): value id {} out of range [0, {})", node.name,
                               node.op_type, id, num_values());
      }
    }
  }
  if (nodes_.size() >= static_cast<size_t>(INT32_MAX)) {
    return OutOfRange("failed to add node '{}': too many nodes", node.name);
  }
  nodes_.push_back(std::move(node));
  return num_nodes() - 1;
}

Status Graph::AddOutput(ValueId id) {
  if (id < 0 || id >= num_values()) {
    return InvalidArgument("failed to add graph output: value id {} out of range [0, {})", id, num_values());
  }
  if (std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end()) {
    return InvalidArgument("failed to add graph output '{}': it is already an output", value(id).name);
  }
  outputs_.push_back(id);
  return OkStatus();
}

ValueId Graph::FindValue(const std::string& name) const {
  auto it = value_index_.find(name);
  return it == value_index_.end() ? kNoValue : it->second;
}

int Graph::FindNode(const std::string& name) const {
  for (int i = 0; i < num_nodes(); ++i) {
    if (nodes_[static_cast<size_t>(i)].name == name) return i;
  }
  return -1;
}

Status Graph::RenameValue(ValueId id, const std::string& new_name) {
  if (id < 0 || id >= num_values()) return InvalidArgument("failed to rename value: id {} out of range", id);
  Value& v = values_[static_cast<size_t>(id)];
  if (v.name == new_name) return OkStatus();
  if (new_name.empty()) return InvalidArgument("failed to rename value '{}': the new name is empty", v.name);
  if (value_index_.count(new_name) != 0) {
    return InvalidArgument("failed to rename value '{}' to '{}': a value of that name exists", v.name, new_name);
  }
  value_index_.erase(v.name);
  v.name = new_name;
  value_index_.emplace(new_name, id);
  return OkStatus();
}

std::vector<int> Graph::Producers() const {
  std::vector<int> producer(values_.size(), -1);
  for (int n = 0; n < num_nodes(); ++n) {
    for (ValueId out : nodes_[static_cast<size_t>(n)].outputs) {
      if (out != kNoValue) producer[static_cast<size_t>(out)] = n;
    }
  }
  return producer;
}

Status Graph::SortTopologically() {
  const std::vector<int> producer = Producers();
  const size_t n = nodes_.size();
  std::vector<int> pending(n, 0);              // producers not yet placed, per node (with multiplicity)
  std::vector<std::vector<int>> consumers(n);  // per producer node, the nodes waiting on it
  for (size_t i = 0; i < n; ++i) {
    for (ValueId in : nodes_[i].inputs) {
      if (in == kNoValue) continue;
      const int p = producer[static_cast<size_t>(in)];
      if (p < 0) continue;
      ++pending[i];
      consumers[static_cast<size_t>(p)].push_back(static_cast<int>(i));
    }
  }
  // A min-heap on the original index keeps the order stable where it is already valid.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[static_cast<size_t>(i)]) {
      if (--pending[static_cast<size_t>(c)] == 0) ready.push(c);
    }
  }
  if (order.size() != n) {
    // Walk back from an unplaced node through unplaced producers until a node repeats: that is a cycle.
    int start = 0;
    while (pending[static_cast<size_t>(start)] == 0) ++start;
    std::vector<int> path;
    std::vector<int> seen_at(n, -1);
    int cur = start;
    while (seen_at[static_cast<size_t>(cur)] < 0) {
      seen_at[static_cast<size_t>(cur)] = static_cast<int>(path.size());
      path.push_back(cur);
      int next = -1;
      for (ValueId in : nodes_[static_cast<size_t>(cur)].inputs) {
        if (in == kNoValue) continue;
        const int p = producer[static_cast<size_t>(in)];
        if (p >= 0 && pending[static_cast<size_t>(p)] > 0) {
          next = p;
          break;
        }
      }
      OCTET_CHECK(next >= 0);
      cur = next;
    }
    std::vector<std::string> names;
    for (size_t k = static_cast<size_t>(seen_at[static_cast<size_t>(cur)]); k < path.size(); ++k) {
      names.push_back(fmt::format("'{}'", nodes_[static_cast<size_t>(path[k])].name));
    }
    std::reverse(names.begin(), names.end());
    names.push_back(names.front());
    return InvalidArgument("failed to sort graph '{}': the nodes form a cycle: {}", name_, fmt::join(names, " -> "));
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (int i : order) sorted.push_back(std::move(nodes_[static_cast<size_t>(i)]));
  nodes_ = std::move(sorted);
  return OkStatus();
}

int64_t Graph::NumParameters() const {
  std::vector<bool> used(values_.size(), false);
  for (const Node& node : nodes_) {
    for (ValueId in : node.inputs) {
      if (in != kNoValue) used[static_cast<size_t>(in)] = true;
    }
  }
  int64_t count = 0;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (used[i] && values_[i].kind == ValueKind::kConstant) count += values_[i].data.NumElements();
  }
  return count;
}

Graph Graph::WithoutUnusedConstants() const {
  std::vector<bool> used(values_.size(), false);
  for (const Node& node : nodes_) {
    for (ValueId id : node.inputs) {
      if (id != kNoValue) used[static_cast<size_t>(id)] = true;
    }
  }
  for (ValueId id : outputs_) used[static_cast<size_t>(id)] = true;
  Graph g(name_);
  std::vector<ValueId> new_id(values_.size(), kNoValue);
  for (size_t i = 0; i < values_.size(); ++i) {
    if (values_[i].kind == ValueKind::kConstant && !used[i]) continue;
    Result<ValueId> id = g.AddValue(values_[i]);
    OCTET_CHECK(id.ok());  // names are unique here already
    new_id[i] = *id;
  }
  auto remap = [&](ValueId id) { return id == kNoValue ? kNoValue : new_id[static_cast<size_t>(id)]; };
  for (ValueId id : inputs_) g.inputs_.push_back(remap(id));
  for (ValueId id : outputs_) g.outputs_.push_back(remap(id));
  for (Node node : nodes_) {
    for (ValueId& id : node.inputs) id = remap(id);
    for (ValueId& id : node.outputs) id = remap(id);
    g.nodes_.push_back(std::move(node));
  }
  return g;
}

std::string Graph::ToString() const {
  std::string out = fmt::format("graph {}\n", name_);
  auto value_text = [&](ValueId id) {
    if (id == kNoValue) return std::string("_");
    const Value& v = value(id);
    return v.shape ? fmt::format("{}: {} {}", v.name, v.dtype, *v.shape) : v.name;
  };
  for (ValueId id : inputs_) out += fmt::format("  input {}\n", value_text(id));
  for (const Value& v : values_) {
    if (v.kind == ValueKind::kConstant) out += fmt::format("  constant {}: {} {}\n", v.name, v.dtype, v.data.shape());
  }
  for (const Node& node : nodes_) {
    std::vector<std::string> ins, outs, attrs;
    for (ValueId id : node.inputs) ins.push_back(id == kNoValue ? "_" : value(id).name);
    for (ValueId id : node.outputs) outs.push_back(id == kNoValue ? "_" : value(id).name);
    for (const auto& [k, a] : node.attributes.items()) attrs.push_back(fmt::format("{}={}", k, a.ToString()));
    out += fmt::format("  node {} = {}{}{}({}){}\n", fmt::join(outs, ", "), node.domain,
                       node.domain.empty() ? "" : ".", node.op_type, fmt::join(ins, ", "),
                       attrs.empty() ? fmt::format("  # {}", node.name)
                                     : fmt::format(" {{{}}}  # {}", fmt::join(attrs, ", "), node.name));
  }
  for (ValueId id : outputs_) out += fmt::format("  output {}\n", value_text(id));
  for (const Value& v : values_) {
    if (v.qparams) out += fmt::format("  qparams {}: {}\n", v.name, v.qparams->ToString());
  }
  return out;
}

}  // namespace octet
