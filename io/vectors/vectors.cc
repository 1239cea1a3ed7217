// Test vectors: capture through the executor's hooks, the directory and its manifest, and the replay driver. The
// per-operator rules are in vector_ops.cc.
#include "io/vectors/vectors.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/executor.h"
#include "core/op_table.h"
#include "core/version.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "io/vectors/vector_ops.h"
#include "io/vectors/vectors_json.h"
#include "quant/quantized_registry.h"

namespace octet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using vectors::NodeVectors;
using vectors::VectorTensor;

constexpr const char* kManifest = "manifest.json";

// A folder name for a node: its index (graph order, unique) and its name made safe for file systems.
std::string NodeFolder(int index, const std::string& name) {
  std::string s;
  for (char c : name) {
    const bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    s += safe ? c : '_';
  }
  while (!s.empty() && (s.front() == '_' || s.front() == '.')) s.erase(s.begin());
  if (s.size() > 100) s.resize(100);
  return fmt::format("nodes/{:04d}_{}", index, s.empty() ? "node" : s);
}

// input0.npy, weight.npy, bias.npy, output0.npy, accumulator.npy, ...
std::string FileName(const VectorTensor& t) {
  if (t.role == "input" || t.role == "output") return fmt::format("{}{}.npy", t.role, t.slot);
  return t.role + ".npy";
}

// The role of input `slot` of a node: the linear operators name their weight and bias.
std::string InputRole(const Node& node, size_t slot) {
  const std::optional<Int8Op> op = FindInt8Op(node.domain, node.op_type);
  const bool linear = op && Int8OpInfoOf(*op).convert == ConvertForm::kWeighted;  // QConv, QGemm, QMatMul
  if (linear && slot == 1) return "weight";
  if (linear && slot == 2) return "bias";
  return "input";
}

Status WriteBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return IoError("failed to write '{}': {}", path.string(), std::strerror(errno));
  return OkStatus();
}

json NodeToJson(const NodeVectors& v, const std::string& folder) {
  json files = json::array();
  for (const VectorTensor& t : v.tensors) {
    json f = {{"role", t.role},
              {"file", folder + "/" + FileName(t)},
              {"dtype", DTypeName(t.tensor.dtype())},
              {"shape", t.tensor.shape().dims()}};
    if (t.role == "input" || t.role == "output" || t.role == "weight" || t.role == "bias") {
      f["slot"] = t.slot;
      f["value"] = t.value;
    }
    if (t.qparams) f["qparams"] = vectors::QParamsToJson(*t.qparams);
    files.push_back(std::move(f));
  }
  return {{"index", v.index},
          {"name", v.name},
          {"op", v.op_type},
          {"domain", v.domain},
          {"kernel", v.kernel},
          {"replay", vectors::HasReference(v.domain, v.op_type) ? "reference" : "none"},
          {"attributes", vectors::AttributesToJson(v.attributes)},
          {"params", v.params},
          {"files", std::move(files)}};
}

// The recorded tensors of one node while the graph runs.
struct Capture {
  NodeVectors v;
  bool ran = false;
};

Status CopyIn(const Graph& g, const Node& node, std::span<const ConstTensorView> views, bool outputs, NodeVectors& v) {
  const std::vector<ValueId>& ids = outputs ? node.outputs : node.inputs;
  for (size_t slot = 0; slot < views.size() && slot < ids.size(); ++slot) {
    if (ids[slot] == kNoValue || views[slot].raw_data() == nullptr) continue;
    OCTET_ASSIGN_OR_RETURN(Tensor t, views[slot].ToTensor());
    const Value& value = g.value(ids[slot]);
    v.tensors.push_back(
        {outputs ? "output" : InputRole(node, slot), static_cast<int>(slot), value.name, std::move(t), value.qparams});
  }
  return OkStatus();
}

// Removes a staging folder unless told to keep it.
struct StagingFolder {
  fs::path path;
  bool keep = false;
  ~StagingFolder() {
    std::error_code ec;
    if (!keep && !path.empty()) fs::remove_all(path, ec);
  }
};

bool IsNonEmptyDirectoryOrFile(const fs::path& dir, std::string* why) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) return false;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) {
    *why = "it exists and is not a directory";
    return true;
  }
  if (!fs::is_empty(dir, ec)) {
    *why = "it exists and is not empty (use --force to replace it)";
    return true;
  }
  return false;
}

// Puts the finished `staged` folder at `dir`: a rename when `dir` is absent or empty, else (force) an atomic exchange
// and the removal of the old contents.
Status SwapIn(const fs::path& staged, const fs::path& dir, bool force) {
  std::error_code ec;
  std::string why;
  if (IsNonEmptyDirectoryOrFile(dir, &why)) {
    if (!force || !fs::is_directory(fs::symlink_status(dir, ec))) {
      return FailedPrecondition("failed to write vectors to '{}': {}", dir.string(), why);
    }
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
      return IoError("failed to write vectors to '{}': cannot swap in the new folder: {}", dir.string(),
                     std::strerror(errno));
    }
    fs::remove_all(staged, ec);  // the old contents, now at `staged`
  } else if (::rename(staged.c_str(), dir.c_str()) != 0) {
    return IoError("failed to write vectors to '{}': cannot rename '{}' to it: {}", dir.string(), staged.string(),
                   std::strerror(errno));
  }
  return OkStatus();
}

Result<std::vector<Tensor>> OrderInputs(const Graph& graph, const std::vector<std::pair<std::string, Tensor>>& inputs,
                                        CompileOptions& options) {
  std::map<std::string, const Tensor*> by_name;
  std::vector<std::string> names;
  for (ValueId id : graph.inputs()) names.push_back(graph.value(id).name);
  for (const auto& [name, t] : inputs) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return InvalidArgument("graph '{}' has no input named '{}' (its inputs: {})", graph.name(), name,
                             fmt::join(names, ", "));
    }
    if (!by_name.emplace(name, &t).second) return InvalidArgument("input '{}' is given twice", name);
  }
  std::vector<Tensor> ordered;
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    auto it = by_name.find(value.name);
    if (it == by_name.end()) return InvalidArgument("input '{}' of graph '{}' is not given", value.name, graph.name());
    const Tensor& t = *it->second;
    if (t.dtype() != value.dtype) {
      return InvalidArgument("input '{}' must be {}, got {}", value.name, value.dtype, t.dtype());
    }
    if (value.shape) {
      bool fits = value.shape->rank() == t.shape().rank();
      for (int d = 0; fits && d < t.shape().rank(); ++d) {
        fits = value.shape->dim(d) == kUnknownDim || value.shape->dim(d) == t.shape().dim(d);
      }
      if (!fits) {
        return InvalidArgument("input '{}' must have shape {}, got {}", value.name, *value.shape, t.shape());
      }
    }
    options.input_shapes.emplace_back(value.name, t.shape());
    ordered.push_back(t);
  }
  return ordered;
}

}  // namespace

Result<VectorsSummary> WriteVectors(const Graph& graph, const std::vector<std::pair<std::string, Tensor>>& inputs,
                                    const std::string& dir_name, const Context& context,
                                    const VectorsOptions& options) {
  auto fail = [&](const Status& s) { return s.WithContext(fmt::format("failed to write vectors to '{}'", dir_name)); };
  if (dir_name.empty()) return InvalidArgument("failed to write vectors: empty folder name");
  fs::path dir(dir_name);
  while (!dir.empty() && !dir.has_filename()) dir = dir.parent_path();  // "out/" -> "out"
  std::string why;
  std::error_code dir_ec;
  if (IsNonEmptyDirectoryOrFile(dir, &why) && !(options.force && fs::is_directory(dir, dir_ec))) {
    return FailedPrecondition("failed to write vectors to '{}': {}", dir_name, why);
  }

  // Which nodes, by index.
  std::set<int> selected;
  for (const std::string& name : options.nodes) {
    const int index = graph.FindNode(name);
    if (index < 0) return fail(NotFound("graph '{}' has no node named '{}'", graph.name(), name));
    selected.insert(index);
  }
  CompileOptions compile;
  OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> ordered, [&]() -> Result<std::vector<Tensor>> {
    auto r = OrderInputs(graph, inputs, compile);
    if (!r.ok()) return fail(r.status());
    return r;
  }());
  Result<Executor> exec = Executor::Compile(graph, context, QuantizedGraphRegistry(), compile);
  if (!exec.ok()) return fail(exec.status());
  const Graph& g = exec->graph();
  for (int index : selected) {
    if (exec->is_folded(index)) {
      return fail(InvalidArgument("node '{}' is folded at compile time (all its inputs are constants): it never runs",
                                  g.node(index).name));
    }
  }
  const bool all = options.nodes.empty();

  // Run once, copying each selected node's inputs before it runs (its outputs may reuse their buffers) and its
  // outputs after.
  std::vector<Capture> captures(static_cast<size_t>(g.num_nodes()));
  RunOptions run;
  run.before_node.push_back([&](const NodeCall& call) -> Status {
    if (!all && selected.count(call.node_index) == 0) return OkStatus();
    Capture& c = captures[static_cast<size_t>(call.node_index)];
    c.v.index = call.node_index;
    c.v.name = call.node.name;
    c.v.op_type = call.node.op_type;
    c.v.domain = call.node.domain;
    c.v.kernel = exec->kernel_name(call.node_index);
    c.v.attributes = call.node.attributes;
    return CopyIn(g, call.node, call.inputs, false, c.v);
  });
  run.after_node.push_back([&](const NodeCall& call) -> Status {
    if (!all && selected.count(call.node_index) == 0) return OkStatus();
    Capture& c = captures[static_cast<size_t>(call.node_index)];
    c.ran = true;
    std::vector<ConstTensorView> outs(call.outputs.begin(), call.outputs.end());
    return CopyIn(g, call.node, outs, true, c.v);
  });
  Result<std::vector<Tensor>> outputs = exec->Run(ordered, run);
  if (!outputs.ok()) return fail(outputs.status());

  // Stage the folder.
  static std::atomic<uint64_t> counter{0};
  StagingFolder staged;
  staged.path = dir.string() + fmt::format(".tmp-{}-{}", ::getpid(), counter++);
  std::error_code ec;
  if (!fs::create_directories(staged.path / "nodes", ec)) {
    return fail(IoError("cannot create '{}': {}", staged.path.string(), ec.message()));
  }
  VectorsSummary summary;
  json nodes = json::array();
  for (Capture& c : captures) {
    if (!c.ran) continue;
    if (Status s = vectors::DeriveNodeVectors(c.v); !s.ok()) return fail(s);
    const std::string folder = NodeFolder(c.v.index, c.v.name);
    fs::create_directories(staged.path / folder, ec);
    if (ec) return fail(IoError("cannot create '{}': {}", (staged.path / folder).string(), ec.message()));
    for (const VectorTensor& t : c.v.tensors) {
      if (Status s = WriteBytes(staged.path / folder / FileName(t), SerializeNpy(t.tensor)); !s.ok()) return fail(s);
      ++summary.files;
    }
    nodes.push_back(NodeToJson(c.v, folder));
    summary.nodes.push_back(c.v.name);
    if (!vectors::HasReference(c.v.domain, c.v.op_type)) summary.not_replayed.push_back(c.v.name);
  }
  json graph_inputs = json::array();
  for (ValueId id : g.inputs()) {
    const Value& value = g.value(id);
    graph_inputs.push_back(
        {{"name", value.name}, {"dtype", DTypeName(value.dtype)}, {"shape", exec->value_shape(id).dims()}});
  }
  const json manifest = {{"schema_version", kVectorsSchemaVersion},
                         {"producer", fmt::format("octet {}", Version())},
                         {"model", options.model_name},
                         {"graph", g.name()},
                         {"inputs", std::move(graph_inputs)},
                         {"nodes", std::move(nodes)}};
  if (Status s = WriteBytes(staged.path / kManifest, manifest.dump(1) + "\n"); !s.ok()) return fail(s);

  // The files must replay before they are published: octet's kernels and the references agree, and the files
  // hold what was computed.
  Result<ReplayReport> check = ReplayVectors(staged.path.string());
  if (!check.ok()) {
    return fail(
        Internal("the recorded vectors do not replay through the reference kernels: {}", check.status().message()));
  }
  if (Status s = SwapIn(staged.path, dir, options.force); !s.ok()) return s;
  staged.keep = true;  // renamed away (or holding the old contents, removed by SwapIn)
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  if (const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY); fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
  return summary;
}

namespace {

Result<NodeVectors> ReadNode(const fs::path& dir, const json& n) {
  NodeVectors v;
  v.index = n.at("index").get<int>();
  v.name = n.at("name").get<std::string>();
  v.op_type = n.at("op").get<std::string>();
  v.domain = n.at("domain").get<std::string>();
  v.kernel = n.value("kernel", "");
  auto where = [&](const Status& s) {
    return s.WithContext(fmt::format("failed to replay node '{}' ({})", v.name, v.op_type));
  };
  Result<AttributeMap> attributes = vectors::AttributesFromJson(n.at("attributes"));
  if (!attributes.ok()) return where(attributes.status());
  v.attributes = std::move(*attributes);
  v.params = n.at("params");
  if (!v.params.is_object()) return where(InvalidArgument("'params' must be an object"));
  for (const json& f : n.at("files")) {
    VectorTensor t;
    t.role = f.at("role").get<std::string>();
    t.slot = f.value("slot", 0);
    t.value = f.value("value", "");
    const std::string file = f.at("file").get<std::string>();
    const fs::path rel(file);
    if (rel.is_absolute() || std::any_of(rel.begin(), rel.end(), [](const fs::path& p) { return p == ".."; })) {
      return where(InvalidArgument("file '{}' lies outside the vectors folder", file));
    }
    Result<Tensor> tensor = ReadNpy((dir / rel).string());
    if (!tensor.ok()) return where(tensor.status());
    const std::string dtype = f.at("dtype").get<std::string>();
    const std::vector<int64_t> shape = f.at("shape").get<std::vector<int64_t>>();
    if (dtype != DTypeName(tensor->dtype()) || shape != tensor->shape().dims()) {
      return where(DataLoss("file '{}' holds {} {}, the manifest says {} [{}]", file, tensor->dtype(), tensor->shape(),
                            dtype, fmt::join(shape, ", ")));
    }
    t.tensor = std::move(*tensor);
    if (f.contains("qparams")) {
      Result<QParams> qp = vectors::QParamsFromJson(f.at("qparams"));
      if (!qp.ok()) return where(qp.status().WithContext(fmt::format("file '{}'", file)));
      t.qparams = std::move(*qp);
    }
    if (v.Find(t.role, t.slot) != nullptr) {
      return where(InvalidArgument("{} {} is listed twice", t.role, t.slot));
    }
    v.tensors.push_back(std::move(t));
  }
  return v;
}

}  // namespace

Result<ReplayReport> ReplayVectors(const std::string& dir_name) {
  const fs::path dir(dir_name);
  auto fail = [&](const Status& s) { return s.WithContext(fmt::format("failed to replay vectors '{}'", dir_name)); };
  Result<std::string> text = ReadFile((dir / kManifest).string());
  if (!text.ok()) return fail(text.status());
  const json manifest = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object()) return fail(InvalidArgument("manifest.json is not JSON"));
  if (!manifest.contains("schema_version") || !manifest["schema_version"].is_number_integer() ||
      manifest["schema_version"].get<int>() != kVectorsSchemaVersion) {
    return fail(InvalidArgument("manifest.json has schema_version {}, this octet reads {}",
                                manifest.value("schema_version", json()).dump(), kVectorsSchemaVersion));
  }
  if (!manifest.contains("nodes") || !manifest["nodes"].is_array()) {
    return fail(InvalidArgument("manifest.json has no 'nodes' list"));
  }
  ReplayReport report;
  for (const json& n : manifest["nodes"]) {
    Result<NodeVectors> v = [&]() -> Result<NodeVectors> {
      try {
        return ReadNode(dir, n);
      } catch (const json::exception& e) {
        return InvalidArgument("a 'nodes' entry is malformed: {}", e.what());
      }
    }();
    if (!v.ok()) return fail(v.status());
    if (!vectors::HasReference(v->domain, v->op_type)) {
      report.skipped.push_back(v->name);
      continue;
    }
    if (Status s = vectors::ReplayNode(*v, &report.elements); !s.ok()) return fail(s);
    report.replayed.push_back(v->name);
  }
  return report;
}

}  // namespace octet
