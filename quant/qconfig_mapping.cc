// QConfigMapping resolution (PyTorch 1.13 torch/ao/quantization/fx/qconfig_mapping_utils.py order).
#include "quant/qconfig_mapping.h"

namespace octet {

QConfigMapping& QConfigMapping::SetGlobal(std::optional<QConfig> qconfig) {
  global_ = std::move(qconfig);
  return *this;
}

QConfigMapping& QConfigMapping::SetObjectType(std::string op_type, std::optional<QConfig> qconfig) {
  object_types_[std::move(op_type)] = std::move(qconfig);
  return *this;
}

QConfigMapping& QConfigMapping::SetModuleName(std::string name, std::optional<QConfig> qconfig) {
  module_names_[std::move(name)] = std::move(qconfig);
  return *this;
}

std::optional<QConfig> QConfigMapping::QConfigFor(const Node& node) const {
  // The node, then each parent scope: "a.b.c", "a.b", "a".
  std::string_view name = node.name;
  while (!name.empty()) {
    if (auto it = module_names_.find(name); it != module_names_.end()) return it->second;
    const size_t dot = name.rfind('.');
    if (dot == std::string_view::npos) break;
    name = name.substr(0, dot);
  }
  if (auto it = object_types_.find(node.op_type); it != object_types_.end()) return it->second;
  return global_;
}

Status QConfigMapping::Validate(const Graph* graph) const {
  if (global_.has_value()) {
    if (Status s = global_->Validate(); !s.ok()) return InvalidArgument("global qconfig: {}", s.message());
  }
  for (const auto& [op, q] : object_types_) {
    if (!q.has_value()) continue;
    if (Status s = q->Validate(); !s.ok()) return InvalidArgument("qconfig for op type '{}': {}", op, s.message());
  }
  for (const auto& [name, q] : module_names_) {
    if (q.has_value()) {
      if (Status s = q->Validate(); !s.ok()) return InvalidArgument("qconfig for node '{}': {}", name, s.message());
    }
    if (graph == nullptr) continue;
    bool found = false;
    for (const Node& n : graph->nodes()) {
      if (n.name == name || (n.name.size() > name.size() && n.name.compare(0, name.size(), name) == 0 &&
                             n.name[name.size()] == '.')) {
        found = true;
        break;
      }
    }
    if (!found) return NotFound("qconfig mapping names node '{}', but graph '{}' has no such node or scope", name,
                                graph->name());
  }
  return OkStatus();
}

std::vector<std::string> NodesInScope(const Graph& graph, std::string_view scope) {
  auto covers = [scope](std::string_view name) {
    if (name.size() < scope.size() || name.compare(0, scope.size(), scope) != 0) return false;
    return name.size() == scope.size() || name[scope.size()] == '.' || name[scope.size()] == '/';
  };
  std::vector<std::string> out;
  if (scope.empty()) return out;
  for (const Node& n : graph.nodes()) {
    const std::string_view name = n.name;
    if (covers(name) || (scope.front() != '/' && !name.empty() && name.front() == '/' && covers(name.substr(1)))) {
      out.push_back(n.name);
    }
  }
  return out;
}

Result<QConfigMapping> GetDefaultQConfigMapping(std::string_view backend) {
  OCTET_ASSIGN_OR_RETURN(QConfig q, GetDefaultQConfig(backend));
  QConfigMapping m;
  m.SetGlobal(std::move(q));
  return m;
}

}  // namespace octet
