// QConfigMapping: which QConfig each node gets (torch.ao.quantization.QConfigMapping). An entry holds a QConfig or
// none (std::nullopt), which keeps the node float. Resolution, most specific first, as PyTorch 1.13's FX flow:
//   1. node name (set_module_name): the node's own name, then its parents' names ("layer1.0.conv1" is matched by
//      "layer1.0", then "layer1"), so a whole sub-module can be configured or kept float at once;
//   2. op type (set_object_type): the node's op type, e.g. "Conv", "Gemm", "MatMul", "Add";
//   3. the global entry (set_global); with none set, nodes stay float.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph.h"
#include "core/status.h"
#include "quant/qconfig.h"

namespace octet {

class QConfigMapping {
 public:
  QConfigMapping& SetGlobal(std::optional<QConfig> qconfig);
  QConfigMapping& SetObjectType(std::string op_type, std::optional<QConfig> qconfig);
  QConfigMapping& SetModuleName(std::string name, std::optional<QConfig> qconfig);

  const std::optional<QConfig>& global() const { return global_; }

  // The QConfig for a node (resolution above); std::nullopt keeps it float.
  std::optional<QConfig> QConfigFor(const Node& node) const;
  // Validates every QConfig in the mapping, naming the entry; and (when `graph` is given) fails on a module name
  // that names no node and is no prefix of a node name, which is almost always a typo.
  Status Validate(const Graph* graph = nullptr) const;

 private:
  std::optional<QConfig> global_;
  std::map<std::string, std::optional<QConfig>, std::less<>> object_types_;
  std::map<std::string, std::optional<QConfig>, std::less<>> module_names_;
};

// The names of the nodes a scope covers: the node named `scope`, and every node whose name starts with `scope`
// followed by '.' or '/' ("blocks.3" covers "blocks.3.attn.qkv" and "blocks.3/attn/MatMul"); the leading '/' of
// ONNX exporters' names is ignored ("blocks.3" also covers "/blocks.3/attn/MatMul"). Graph order; empty if none.
std::vector<std::string> NodesInScope(const Graph& graph, std::string_view scope);

// PyTorch 1.13's get_default_qconfig_mapping(backend): the backend's QConfig globally (GetDefaultQConfig).
Result<QConfigMapping> GetDefaultQConfigMapping(std::string_view backend);

}  // namespace octet
