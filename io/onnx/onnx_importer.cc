// ModelProto -> Graph, validating the model's structure, tensors and attributes.
#include "io/onnx/onnx_importer.h"

#include <algorithm>
#include <climits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include "core/verifier.h"
#include "io/file_util.h"
#include "io/onnx/onnx_op_names.h"
#include "io/onnx/onnx_tensor.h"
#include "io/onnx/opset_adapters.h"
#include "io/onnx/qdq_import.h"
#include "ops/float/registry.h"

namespace octet {
namespace {

using onnx::AttributeProto;

// Attribute kinds octet has no use for make their node unsupported rather than the model malformed.
bool IsUnsupportedKind(AttributeProto::AttributeType t) {
  return t == AttributeProto::GRAPHS || t == AttributeProto::SPARSE_TENSOR || t == AttributeProto::SPARSE_TENSORS ||
         t == AttributeProto::TYPE_PROTO || t == AttributeProto::TYPE_PROTOS || t == AttributeProto::TENSORS;
}

// Fails unless only the field of the declared type holds data (ONNX 1.12's checker does not look).
Status CheckAttributeFields(const AttributeProto& a) {
  const AttributeProto::AttributeType t = a.type();
  const int filled = (a.has_f() ? 1 : 0) + (a.has_i() ? 1 : 0) + (a.has_s() ? 1 : 0) + (a.has_t() ? 1 : 0) +
                     (a.has_g() ? 1 : 0) + (a.has_sparse_tensor() ? 1 : 0) + (a.has_tp() ? 1 : 0) +
                     (a.floats_size() > 0 ? 1 : 0) + (a.ints_size() > 0 ? 1 : 0) + (a.strings_size() > 0 ? 1 : 0) +
                     (a.tensors_size() > 0 ? 1 : 0) + (a.graphs_size() > 0 ? 1 : 0) +
                     (a.sparse_tensors_size() > 0 ? 1 : 0) + (a.type_protos_size() > 0 ? 1 : 0);
  bool right = false;  // the field of the declared type holds data
  bool list = true;    // an empty list is valid: its field is simply absent
  switch (t) {
    case AttributeProto::FLOAT: right = a.has_f(), list = false; break;
    case AttributeProto::INT: right = a.has_i(), list = false; break;
    case AttributeProto::STRING: right = a.has_s(), list = false; break;
    case AttributeProto::TENSOR: right = a.has_t(), list = false; break;
    case AttributeProto::GRAPH: right = a.has_g(), list = false; break;
    case AttributeProto::SPARSE_TENSOR: right = a.has_sparse_tensor(), list = false; break;
    case AttributeProto::TYPE_PROTO: right = a.has_tp(), list = false; break;
    case AttributeProto::FLOATS: right = a.floats_size() > 0; break;
    case AttributeProto::INTS: right = a.ints_size() > 0; break;
    case AttributeProto::STRINGS: right = a.strings_size() > 0; break;
    case AttributeProto::TENSORS: right = a.tensors_size() > 0; break;
    case AttributeProto::GRAPHS: right = a.graphs_size() > 0; break;
    case AttributeProto::SPARSE_TENSORS: right = a.sparse_tensors_size() > 0; break;
    case AttributeProto::TYPE_PROTOS: right = a.type_protos_size() > 0; break;
    default:
      return InvalidArgument("attribute '{}' has type {}, which is not an ONNX attribute type", a.name(),
                             static_cast<int>(t));
  }
  const bool ok = list ? (filled == 0 || (filled == 1 && right)) : (filled == 1 && right);
  if (!ok) {
    return InvalidArgument("attribute '{}' is declared {} but holds {}", a.name(), AttributeProto::AttributeType_Name(t),
                           filled == 0 ? "no value" : "a value of another kind");
  }
  return OkStatus();
}

Result<Attribute> AttributeFromOnnx(const AttributeProto& a, const std::string& model_dir) {
  switch (a.type()) {
    case AttributeProto::FLOAT: return Attribute(a.f());
    case AttributeProto::INT: return Attribute(static_cast<int64_t>(a.i()));
    case AttributeProto::STRING: return Attribute(a.s());
    case AttributeProto::TENSOR: {
      OCTET_ASSIGN_OR_RETURN(Tensor t, onnx_import::TensorFromOnnx(a.t(), model_dir));
      return Attribute(std::move(t));
    }
    case AttributeProto::FLOATS: return Attribute(std::vector<float>(a.floats().begin(), a.floats().end()));
    case AttributeProto::INTS: return Attribute(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AttributeProto::STRINGS: return Attribute(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    default: return Internal("attribute kind {} reached conversion", static_cast<int>(a.type()));
  }
}

// The declared shape of a graph input, unknown dims as kUnknownDim; `dim_names` gets each dim's dim_param (or "").
Result<Shape> InputShape(const onnx::ValueInfoProto& vi, std::vector<std::string>& dim_names) {
  if (!vi.has_type() || !vi.type().has_tensor_type()) {
    return Unimplemented("graph input '{}' is not a tensor (sequences, maps and optionals are not supported)",
                         vi.name());
  }
  const auto& tt = vi.type().tensor_type();
  if (!tt.has_shape()) return Unimplemented("graph input '{}' has no shape; octet needs at least its rank", vi.name());
  if (tt.shape().dim_size() > 64) return InvalidArgument("graph input '{}' has rank above 64", vi.name());
  std::vector<int64_t> dims;
  for (const auto& d : tt.shape().dim()) {
    // Some exporters write dim_value -1 for a dynamic dim: read it as an unnamed one (other negatives are errors).
    if (d.has_dim_value() && d.dim_value() != -1) {
      if (d.dim_value() < 0 || d.dim_value() > Shape::kMaxElements) {
        return InvalidArgument("graph input '{}' has dimension {}", vi.name(), d.dim_value());
      }
      dims.push_back(d.dim_value());
      dim_names.emplace_back();
    } else {
      dims.push_back(kUnknownDim);
      dim_names.push_back(d.has_dim_param() ? d.dim_param() : std::string());
    }
  }
  return Shape(std::move(dims));
}

}  // namespace

namespace {

Result<std::vector<std::string>> NodeNames(const onnx::GraphProto& gp);

// A model without the default domain (a training-domain model, say) is refused naming the nodes of other domains:
// octet runs only default-domain operators.
Status NoDefaultOpset(const onnx::ModelProto& model) {
  std::vector<std::string> domains, nodes;
  for (const auto& os : model.opset_import()) domains.push_back(fmt::format("{} {}", os.domain(), os.version()));
  const std::string imports = domains.empty() ? "none" : fmt::format("only {}", fmt::join(domains, ", "));
  Result<std::vector<std::string>> names = model.has_graph() ? NodeNames(model.graph()) : std::vector<std::string>{};
  for (int i = 0; names.ok() && i < model.graph().node_size(); ++i) {
    const onnx::NodeProto& n = model.graph().node(i);
    if (n.domain().empty() || n.domain() == "ai.onnx") continue;
    nodes.push_back(fmt::format("'{}' ({}.{})", (*names)[static_cast<size_t>(i)], n.domain(), n.op_type()));
  }
  if (nodes.empty()) return InvalidArgument("the model imports no opset of the default ONNX domain ({})", imports);
  return Unimplemented("{} unsupported node(s): {} (the model imports no opset of the default ONNX domain, {}; "
                       "octet runs only default-domain operators)",
                       nodes.size(), fmt::join(nodes, ", "), imports);
}

// Parses and checks the envelope: size, protobuf, IR version, opsets, a graph.
Status ParseModel(std::span<const std::byte> bytes, onnx::ModelProto& model, int64_t& opset) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return InvalidArgument("the file has {} bytes; protobuf models are limited to 2 GiB (use external data)",
                           bytes.size());
  }
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return DataLoss("the bytes are not a valid ONNX ModelProto (truncated, corrupt or another format)");
  }
  // IR 10 adds 4-bit element types (refused by tensor import) and function overloads (a node calling a local
  // function is an unsupported op): nothing octet reads changes.
  if (!model.has_ir_version() || model.ir_version() < 3 || model.ir_version() > 10) {
    return Unimplemented("IR version {} is not supported (3 to 10)", model.ir_version());
  }
  opset = -1;
  for (const auto& os : model.opset_import()) {
    if (os.domain().empty() || os.domain() == "ai.onnx") {
      if (opset >= 0) return InvalidArgument("the default domain is imported twice");
      opset = os.version();
    }
  }
  if (opset < 0) return NoDefaultOpset(model);
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset) {
    return Unimplemented("opset {} is not supported (octet reads opsets {} to {}, and older ones for the ops opset {} "
                         "kept; convert the model with onnx.version_converter)",
                         opset, onnx_import::kOldestAdaptedOpset, kMaxOnnxOpset, onnx_import::kOldestAdaptedOpset);
  }
  if (!model.has_graph()) return InvalidArgument("the model has no graph");
  if (model.graph().sparse_initializer_size() > 0) return Unimplemented("sparse initializers are not supported");
  return OkStatus();
}

Status DefinedTwice(const std::string& value, const std::string& as) {
  return InvalidArgument("value '{}' is defined twice (again as {})", value, as);
}

// Initializers become constants, the other graph inputs inputs.
Status ImportValues(const onnx::GraphProto& gp, const std::string& model_dir, Graph& graph) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : gp.initializer()) {
    if (init.name().empty()) return InvalidArgument("an initializer has no name");
    if (graph.FindValue(init.name()) != kNoValue) return DefinedTwice(init.name(), "an initializer");
    auto t = onnx_import::TensorFromOnnx(init, model_dir);
    if (!t.ok()) return t.status().WithContext("initializer");
    OCTET_RETURN_IF_ERROR(graph.AddConstant(init.name(), std::move(*t)).status());
    initializers.insert(init.name());
  }
  for (const auto& vi : gp.input()) {
    if (vi.name().empty()) return InvalidArgument("a graph input has no name");
    if (initializers.count(vi.name()) != 0) continue;  // IR < 4 lists initializers among the inputs
    if (graph.FindValue(vi.name()) != kNoValue) return DefinedTwice(vi.name(), "a graph input");
    std::vector<std::string> dim_names;
    OCTET_ASSIGN_OR_RETURN(Shape shape, InputShape(vi, dim_names));
    auto dtype = onnx_import::DTypeFromOnnx(vi.type().tensor_type().elem_type());
    if (!dtype.ok()) return dtype.status().WithContext(fmt::format("graph input '{}'", vi.name()));
    OCTET_ASSIGN_OR_RETURN(ValueId id, graph.AddInput(vi.name(), *dtype, std::move(shape)));
    if (std::any_of(dim_names.begin(), dim_names.end(), [](const std::string& n) { return !n.empty(); })) {
      graph.mutable_value(id).dim_names = std::move(dim_names);
    }
  }
  return OkStatus();
}

// Node names: explicit ones must be unique; empty ones get "<op_type>_<index>" (made unique).
Result<std::vector<std::string>> NodeNames(const onnx::GraphProto& gp) {
  std::vector<std::string> names(static_cast<size_t>(gp.node_size()));
  std::unordered_set<std::string> taken;
  for (int i = 0; i < gp.node_size(); ++i) {
    const std::string& n = gp.node(i).name();
    if (n.empty()) continue;
    if (!taken.insert(n).second) return InvalidArgument("two nodes are named '{}'", n);
    names[static_cast<size_t>(i)] = n;
  }
  for (int i = 0; i < gp.node_size(); ++i) {
    if (!names[static_cast<size_t>(i)].empty()) continue;
    std::string n = fmt::format("{}_{}", gp.node(i).op_type().empty() ? "node" : gp.node(i).op_type(), i);
    while (!taken.insert(n).second) n += "_";
    names[static_cast<size_t>(i)] = n;
  }
  return names;
}

// One NodeProto as a Node. `why_unsupported` is set when an attribute kind makes the node unsupported.
Result<Node> ImportNode(const onnx::NodeProto& np, const std::string& name, const Graph& graph,
                        const std::string& model_dir, std::string& why_unsupported) {
  Node node;
  node.name = name;
  node.op_type = np.op_type();
  node.domain = np.domain() == "ai.onnx" ? "" : np.domain();
  const std::string node_where = fmt::format("node '{}' ({})", node.name, node.op_type);
  if (node.op_type.empty()) return InvalidArgument("node '{}' has no op_type", node.name);
  for (int k = 0; k < np.input_size(); ++k) {
    const std::string& in = np.input(k);
    if (in.empty()) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    const ValueId id = graph.FindValue(in);
    if (id == kNoValue) {
      return InvalidArgument("{} input {} '{}' is not defined (no initializer, graph input or node output has that "
                             "name)",
                             node_where, k, in);
    }
    node.inputs.push_back(id);
  }
  for (const std::string& out : np.output()) node.outputs.push_back(out.empty() ? kNoValue : graph.FindValue(out));
  std::unordered_set<std::string> attr_names;
  for (const AttributeProto& a : np.attribute()) {
    if (a.name().empty()) return InvalidArgument("{} has an attribute without a name", node_where);
    if (!attr_names.insert(a.name()).second) {
      return InvalidArgument("{} has two attributes named '{}'", node_where, a.name());
    }
    if (!a.ref_attr_name().empty()) {
      why_unsupported = fmt::format("attribute '{}' refers to a function attribute", a.name());
      continue;
    }
    Status fields = CheckAttributeFields(a);
    if (!fields.ok()) return fields.WithContext(node_where);
    if (a.type() == AttributeProto::GRAPH) continue;  // ImportSubgraphs reads it
    if (IsUnsupportedKind(a.type())) {
      why_unsupported = fmt::format("attribute '{}' is a {}", a.name(), AttributeProto::AttributeType_Name(a.type()));
      continue;
    }
    auto value = AttributeFromOnnx(a, model_dir);
    if (!value.ok()) return value.status().WithContext(fmt::format("{} attribute '{}'", node_where, a.name()));
    node.attributes.Set(a.name(), std::move(*value));
  }
  return node;
}

// Constant nodes holding a float tensor, and Identity nodes of constants (torch shares equal initializers,
// BatchNorm weights among them, through Identity), become constants themselves: weights for folding, fusion and
// quantization, not activations. Integer Constant nodes (shapes, axes) stay nodes, folded at Compile; outputs that
// are graph outputs keep their node. Returns, per node, whether it was absorbed.
Result<std::vector<bool>> AbsorbConstantNodes(const onnx::GraphProto& gp, const std::string& model_dir,
                                              Graph& graph) {
  std::unordered_set<std::string> graph_outputs;
  for (const auto& vi : gp.output()) graph_outputs.insert(vi.name());
  std::vector<bool> absorbed(static_cast<size_t>(gp.node_size()), false);
  for (bool changed = true; changed;) {  // nodes may be out of order: an Identity of an Identity of a weight
    changed = false;
    for (int i = 0; i < gp.node_size(); ++i) {
      const onnx::NodeProto& n = gp.node(i);
      if (absorbed[static_cast<size_t>(i)] || !(n.domain().empty() || n.domain() == "ai.onnx")) continue;
      if (n.output_size() != 1 || n.output(0).empty() || graph_outputs.count(n.output(0)) != 0 ||
          graph.FindValue(n.output(0)) != kNoValue) {
        continue;
      }
      if (onnx_names::IsOpType(n.op_type(), FloatOp::kIdentity) && n.input_size() == 1) {
        const ValueId in = graph.FindValue(n.input(0));
        if (in == kNoValue || graph.value(in).kind != ValueKind::kConstant) continue;
        OCTET_RETURN_IF_ERROR(graph.AddConstant(n.output(0), graph.value(in).data).status());  // shares the data
      } else if (onnx_names::IsOpType(n.op_type(), FloatOp::kConstant) && n.input_size() == 0 &&
                 n.attribute_size() == 1 && n.attribute(0).name() == "value" &&
                 n.attribute(0).type() == AttributeProto::TENSOR && n.attribute(0).has_t() &&
                 n.attribute(0).t().data_type() == onnx::TensorProto::FLOAT) {
        auto t = onnx_import::TensorFromOnnx(n.attribute(0).t(), model_dir);
        if (!t.ok()) return t.status().WithContext(fmt::format("Constant node output '{}'", n.output(0)));
        OCTET_RETURN_IF_ERROR(graph.AddConstant(n.output(0), std::move(*t)).status());
      } else {
        continue;
      }
      absorbed[static_cast<size_t>(i)] = true;
      changed = true;
    }
  }
  return absorbed;
}

// What every level of a model's graphs is imported with.
struct ImportScope {
  const OpRegistry& registry;
  const std::string& model_dir;
  int64_t opset;
};

Status ImportSubgraphs(const onnx::NodeProto& np, const ImportScope& scope, Graph& graph, Node& node);
Status ImportSubgraphValues(const onnx::GraphProto& gp, const std::vector<std::string>& outer,
                            const std::string& model_dir, Graph& graph);

// `outer` (subgraphs only): the names of outer-scope values the graph reads, added as trailing graph inputs.
Status ImportGraph(const onnx::GraphProto& gp, const ImportScope& scope, Graph& graph,
                   const std::vector<std::string>* outer = nullptr) {
  const OpRegistry& registry = scope.registry;
  const std::string& model_dir = scope.model_dir;
  if (outer != nullptr) {
    OCTET_RETURN_IF_ERROR(ImportSubgraphValues(gp, *outer, model_dir, graph));
  } else {
    OCTET_RETURN_IF_ERROR(ImportValues(gp, model_dir, graph));
  }
  OCTET_ASSIGN_OR_RETURN(std::vector<std::string> names, NodeNames(gp));
  OCTET_ASSIGN_OR_RETURN(std::vector<bool> absorbed, AbsorbConstantNodes(gp, model_dir, graph));
  // Every node output exists before any node is read, so inputs may name later nodes (sorted below).
  for (int i = 0; i < gp.node_size(); ++i) {
    if (absorbed[static_cast<size_t>(i)]) continue;
    for (const std::string& out : gp.node(i).output()) {
      if (out.empty()) continue;
      if (graph.FindValue(out) != kNoValue) {
        return DefinedTwice(out, fmt::format("an output of node '{}'", names[static_cast<size_t>(i)]));
      }
      OCTET_RETURN_IF_ERROR(graph.AddNodeValue(out).status());
    }
  }
  std::vector<std::string> unsupported;
  for (int i = 0; i < gp.node_size(); ++i) {
    if (absorbed[static_cast<size_t>(i)]) continue;
    std::string why;
    OCTET_ASSIGN_OR_RETURN(Node node, ImportNode(gp.node(i), names[static_cast<size_t>(i)], graph, model_dir, why));
    if (registry.Find(node.domain, node.op_type) == nullptr) {
      unsupported.push_back(fmt::format("'{}' ({}{}{})", node.name, node.domain, node.domain.empty() ? "" : ".",
                                        node.op_type));
    } else if (!why.empty()) {
      unsupported.push_back(fmt::format("'{}' ({}: {})", node.name, node.op_type, why));
    } else {
      OCTET_RETURN_IF_ERROR(ImportSubgraphs(gp.node(i), scope, graph, node));
    }
    OCTET_RETURN_IF_ERROR(graph.AddNode(std::move(node)).status());
  }
  if (!unsupported.empty()) {
    return Unimplemented("{} unsupported node(s): {}", unsupported.size(), fmt::join(unsupported, ", "));
  }
  if (gp.output_size() == 0) return InvalidArgument("the graph has no outputs");
  for (const auto& vi : gp.output()) {
    const ValueId id = graph.FindValue(vi.name());
    if (id == kNoValue) {
      return InvalidArgument("graph output '{}' is not defined by any node, input or initializer", vi.name());
    }
    if (std::find(graph.outputs().begin(), graph.outputs().end(), id) != graph.outputs().end()) {
      return InvalidArgument("graph output '{}' is listed twice", vi.name());
    }
    OCTET_RETURN_IF_ERROR(graph.AddOutput(id));
  }
  OCTET_RETURN_IF_ERROR(graph.SortTopologically());
  return VerifyGraph(graph);
}

// Issue 23: quantized models made elsewhere become octet's int8 graph (io/onnx/qdq_import.h).
Status RecognizeQdq(const OnnxImportOptions& options, Graph& graph) {
  if (!options.recognize_qdq) return OkStatus();
  OCTET_ASSIGN_OR_RETURN(QdqImportReport report, RecognizeQdqGroups(graph));
  if (options.qdq_report != nullptr) *options.qdq_report = std::move(report);
  return OkStatus();
}

// Control flow. A subgraph (If's branches, Loop's body) becomes a closed octet Graph on its node (Node::subgraphs):
// the outer-scope values it reads, itself or through subgraphs of its own, become trailing inputs of the subgraph
// and of the node (counted by the node's octet_outer_inputs attribute), so the executor sees every dependency.

// Adds the names `gp` reads without defining them (node inputs, outputs, and those of nested subgraphs) to `free`.
void CollectOuterNames(const onnx::GraphProto& gp, std::vector<std::string>& free) {
  std::unordered_set<std::string> defined;
  for (const auto& init : gp.initializer()) defined.insert(init.name());
  for (const auto& vi : gp.input()) defined.insert(vi.name());
  for (const auto& n : gp.node()) defined.insert(n.output().begin(), n.output().end());
  auto add = [&](const std::string& name) {
    if (!name.empty() && defined.count(name) == 0 && std::find(free.begin(), free.end(), name) == free.end()) {
      free.push_back(name);
    }
  };
  for (const auto& n : gp.node()) {
    for (const std::string& in : n.input()) add(in);
    for (const AttributeProto& a : n.attribute()) {
      if (a.type() != AttributeProto::GRAPH || !a.has_g()) continue;
      std::vector<std::string> nested;
      CollectOuterNames(a.g(), nested);
      for (const std::string& name : nested) add(name);
    }
  }
  for (const auto& vi : gp.output()) add(vi.name());
}

// A subgraph's own inputs (Loop's iteration number, cond and carried values) and its outer values. Their dtypes
// and shapes are placeholders: the operator compiles the subgraph for the values it is given.
Status ImportSubgraphValues(const onnx::GraphProto& gp, const std::vector<std::string>& outer,
                            const std::string& model_dir, Graph& graph) {
  onnx::GraphProto own;  // the subgraph's initializers, without its inputs
  *own.mutable_initializer() = gp.initializer();
  OCTET_RETURN_IF_ERROR(ImportValues(own, model_dir, graph));
  for (const auto& vi : gp.input()) {
    if (vi.name().empty()) return InvalidArgument("a subgraph input has no name");
    if (graph.FindValue(vi.name()) != kNoValue) return DefinedTwice(vi.name(), "a subgraph input");
    DType dtype = DType::kF32;
    if (vi.type().has_tensor_type()) {
      auto d = onnx_import::DTypeFromOnnx(vi.type().tensor_type().elem_type());
      if (!d.ok()) return d.status().WithContext(fmt::format("subgraph input '{}'", vi.name()));
      dtype = *d;
    } else if (vi.has_type()) {
      return Unimplemented("subgraph input '{}' is not a tensor (sequences and optionals are not supported)",
                           vi.name());
    }
    OCTET_RETURN_IF_ERROR(graph.AddInput(vi.name(), dtype, Shape()).status());
  }
  for (const std::string& name : outer) OCTET_RETURN_IF_ERROR(graph.AddInput(name, DType::kF32, Shape()).status());
  return OkStatus();
}

// Imports the GRAPH attributes of `np` into node.subgraphs and appends the outer values they read to node.inputs.
Status ImportSubgraphs(const onnx::NodeProto& np, const ImportScope& scope, Graph& graph, Node& node) {
  std::vector<std::string> outer;
  for (const AttributeProto& a : np.attribute()) {
    if (a.type() == AttributeProto::GRAPH) CollectOuterNames(a.g(), outer);
  }
  if (outer.empty() && std::none_of(np.attribute().begin(), np.attribute().end(),
                                    [](const AttributeProto& a) { return a.type() == AttributeProto::GRAPH; })) {
    return OkStatus();
  }
  const std::string where = fmt::format("node '{}' ({})", node.name, node.op_type);
  for (const std::string& name : outer) {
    const ValueId id = graph.FindValue(name);
    if (id == kNoValue) {
      return InvalidArgument("{}: a subgraph reads '{}', which no enclosing graph defines", where, name);
    }
    node.inputs.push_back(id);
  }
  node.attributes.Set("octet_outer_inputs", static_cast<int64_t>(outer.size()));
  for (const AttributeProto& a : np.attribute()) {
    if (a.type() != AttributeProto::GRAPH) continue;
    const std::string what = fmt::format("{} subgraph '{}'", where, a.name());
    onnx::GraphProto gp = a.g();
    if (Status st = onnx_import::AdaptToOctetOpset(gp, scope.opset, scope.registry); !st.ok()) {
      return st.WithContext(what);
    }
    auto sub = std::make_shared<Graph>(gp.name().empty() ? a.name() : gp.name());
    if (Status st = ImportGraph(gp, scope, *sub, &outer); !st.ok()) return st.WithContext(what);
    node.subgraphs[a.name()] = std::move(sub);
  }
  return OkStatus();
}

}  // namespace

Result<Graph> ImportOnnxModel(std::span<const std::byte> bytes, std::string_view name,
                              const OnnxImportOptions& options) {
  const std::string where = fmt::format("failed to import ONNX model '{}'", name);
  onnx::ModelProto model;
  int64_t opset = 0;
  if (Status st = ParseModel(bytes, model, opset); !st.ok()) return st.WithContext(where);
  OpRegistry default_registry;
  const OpRegistry* registry = options.registry;
  if (registry == nullptr) {
    default_registry = FloatOpRegistry();
    registry = &default_registry;
  }
  if (Status st = onnx_import::AdaptToOctetOpset(*model.mutable_graph(), opset, *registry); !st.ok()) {
    return st.WithContext(where);
  }
  const onnx::GraphProto& gp = model.graph();
  Graph graph(gp.name().empty() ? "model" : gp.name());
  const ImportScope scope{*registry, options.model_dir, opset};
  if (Status st = ImportGraph(gp, scope, graph); !st.ok()) return st.WithContext(where);
  if (Status st = RecognizeQdq(options, graph); !st.ok()) return st.WithContext(where);
  return graph;
}

Result<Graph> ReadOnnxModel(const std::string& path, OnnxImportOptions options) {
  OCTET_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  if (options.model_dir.empty()) {
    const size_t slash = path.find_last_of('/');
    options.model_dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  }
  return ImportOnnxModel(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), path, options);
}

}  // namespace octet
