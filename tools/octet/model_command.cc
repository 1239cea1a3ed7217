// `octet run` and `octet inspect`.
#include "tools/octet/model_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/executor.h"
#include "core/graph.h"
#include "core/op_table.h"
#include "io/file_name.h"
#include "io/octet_file.h"
#include "numeric_suite/quantization_guard.h"
#include "ops/float/float_fusion.h"
#include "ops/int8/nhwc_layout.h"
#include "ops/float/registry.h"
#include "quant/quantized_registry.h"
#include "tools/octet/context_options.h"
#include "tools/octet/symbolic_shapes.h"
#if OCTET_WITH_ONNX
#include "io/onnx/onnx_importer.h"
#include "io/onnx/qdq_import.h"
#endif

namespace octet::cli {
namespace {

struct RunCommand {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::string output_dir;
  std::string float_fusion = "on";  // ops/float/float_fusion.h: "off" runs every Relu/Clip node on its own
  ContextFlags context;
};

struct InspectCommand {
  std::string model;
  std::vector<std::string> input_shapes;  // NAME=D0,D1,...
};

int RunModel(const RunCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  std::map<std::string, std::string> files;
  for (const std::string& in : c.inputs) {
    auto kv = SplitAssignment(in, "--input");
    if (!kv.ok()) return ReportUsage(kv.status().message());
    if (!files.emplace(kv->first, kv->second).second) {
      return ReportUsage(fmt::format("--input names '{}' twice", kv->first));
    }
  }

  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Result<LoadedModel> model = LoadModelFile(c.model);
  if (!model.ok()) return ReportFailure(model.status());
  // Graph outputs are never stored NHWC, so the layout pass changes speed only (ops/int8/nhwc_layout.h).
  // Likewise the float fusion pass (ops/float/float_fusion.h): bit-identical outputs, fewer passes over memory.
  const Graph laid_out = int8_ops::PlanNhwcLayout(model->graph);
  const Graph planned = c.float_fusion == "on" ? float_ops::FuseFloatActivations(laid_out) : laid_out;
  const Graph* graph = &planned;
  std::vector<std::string> input_names;
  for (ValueId id : graph->inputs()) input_names.push_back(graph->value(id).name);
  // --input is optional only so that a model without inputs (a constant-only graph) runs.
  if (files.empty() && !input_names.empty()) {
    return ReportUsage(fmt::format("--input is required: '{}' has input(s) {} (use --input {}=FILE.npy)", c.model,
                                   fmt::join(input_names, ", "), input_names.front()));
  }
  for (const auto& [name, file] : files) {
    if (std::find(input_names.begin(), input_names.end(), name) == input_names.end()) {
      return ReportFailure(fmt::format("failed to run '{}': it has no input named '{}' (its inputs: {})", c.model,
                                       name, fmt::join(input_names, ", ")));
    }
  }
  std::vector<Tensor> inputs;
  CompileOptions options;
  for (const std::string& name : input_names) {
    auto it = files.find(name);
    if (it == files.end()) {
      return ReportFailure(fmt::format("failed to run '{}': input '{}' is not given (use --input {}=FILE.npy)",
                                       c.model, name, name));
    }
    Result<Tensor> t = ReadTensorFile(it->second);
    if (!t.ok()) return ReportFailure(t.status());
    options.input_shapes.emplace_back(name, t->shape());
    inputs.push_back(std::move(*t));
  }
  const OpRegistry registry = RegistryFor(*model);
  Result<Executor> exec = Executor::Compile(*graph, *context, registry, options);
  if (!exec.ok()) return ReportFailure(exec.status().WithContext(fmt::format("failed to run '{}'", c.model)));
  Result<std::vector<Tensor>> outputs = exec->Run(inputs);
  if (!outputs.ok()) return ReportFailure(outputs.status().WithContext(fmt::format("failed to run '{}'", c.model)));

  // Everything is computed; now write, removing what was written if a later write fails.
  std::error_code ec;
  std::filesystem::create_directories(c.output_dir, ec);
  if (ec) return ReportFailure(fmt::format("failed to create '{}': {}", c.output_dir, ec.message()));
  std::vector<std::string> names, paths;
  for (ValueId id : graph->outputs()) names.push_back(graph->value(id).name);
  for (const std::string& file : SafeFileNames(names)) {
    paths.push_back((std::filesystem::path(c.output_dir) / (file + ".npy")).string());
  }
  for (size_t k = 0; k < paths.size(); ++k) {
    if (Status s = WriteTensorFile(paths[k], (*outputs)[k]); !s.ok()) {
      for (size_t j = 0; j < k; ++j) std::filesystem::remove(paths[j], ec);
      return ReportFailure(s);
    }
  }
  for (size_t k = 0; k < paths.size(); ++k) {
    fmt::print("{}: {} {} -> {}\n", graph->value(graph->outputs()[k]).name, (*outputs)[k].dtype(),
               (*outputs)[k].shape(), paths[k]);
  }
  return kExitOk;
}

// What `run` would say about the model, for inspect. When the compile for printing failed, the model is compiled
// again with its own declared input shapes, each unknown dim as 1, so that the attribute checks and shape inference
// run; an error there is reported as the model's.
Status ValidateForInspect(const Graph& g, const Context& context, const OpRegistry& registry,
                          const CompileOptions& options, const Status& compiled) {
  if (compiled.ok()) return compiled;
  // The model is judged by itself: shapes given with --input-shape that do not fit it are the user's to fix (the
  // "shapes unknown" line says so), not a reason to call the model broken.
  CompileOptions probe = options;
  probe.input_shapes.clear();
  bool unknown = !options.input_shapes.empty();
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    if (!v.shape) continue;
    std::vector<int64_t> dims = v.shape->dims();
    if (std::none_of(dims.begin(), dims.end(), [](int64_t d) { return d == kUnknownDim; })) continue;
    for (int64_t& d : dims) d = d == kUnknownDim ? 1 : d;
    Result<Shape> shape = Shape::Create(dims);
    if (!shape.ok()) return compiled;
    probe.input_shapes.emplace_back(v.name, std::move(*shape));
    unknown = true;
  }
  if (!unknown) return compiled;
  Result<Executor> exec = Executor::Compile(g, context, registry, probe);
  if (exec.ok()) return OkStatus();
  return exec.status().WithContext("each unknown input dim taken as 1 (set them with --input-shape NAME=D0,D1,...)");
}

int Inspect(const InspectCommand& c) {
  CompileOptions options;
  if (Status s = ParseInputShapes(c.input_shapes, options); !s.ok()) return ReportUsage(s.message());
  Result<LoadedModel> model = LoadModelFile(c.model);
  if (!model.ok()) return ReportFailure(model.status());
  const Graph& g = model->graph;
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  const OpRegistry registry = RegistryFor(*model);
  // Dynamic input dims (a dim_param such as "batch", or unnamed) are bound for the compile and printed symbolically.
  SymbolicShapes symbolic = InferSymbolicShapes(g, context, registry, options);
  const Result<Executor>& exec = symbolic.exec;
  // A model that `run` would refuse (attributes, shape inference) fails inspect too, after what could be printed.
  const Status valid = ValidateForInspect(g, context, registry, options, exec.status());
  auto shape_of = [&](ValueId id) -> std::string {
    if (id == kNoValue) return "_";
    if (exec.ok()) {
      return fmt::format("{} {}", exec->value_dtype(id), FormatDims(symbolic.dims[static_cast<size_t>(id)]));
    }
    const Value& v = g.value(id);
    if (!v.shape) return "?";
    std::vector<std::string> dims;
    for (int64_t d : v.shape->dims()) dims.push_back(d == kUnknownDim ? "?" : fmt::format("{}", d));
    for (const DynamicDim& d : FindDynamicDims(g, options)) {
      if (d.input == v.name) dims[static_cast<size_t>(d.dim)] = d.symbol;
    }
    return fmt::format("{} {}", v.dtype, FormatDims(dims));
  };

  fmt::print("model {}: graph '{}', {} nodes, {} parameters\n", c.model, g.name(), g.num_nodes(), g.NumParameters());
  if (model->is_octet) {
    fmt::print("format .octet version {}\n", model->format_version);
    // Metadata values are free text: keep each on one line.
    for (const auto& [key, value] : model->metadata) {
      if (key == "guard") {
        fmt::print("metadata guard: {} bytes of JSON (GuardReportJson), shown below\n", value.size());
      } else {
        fmt::print("metadata {}: {:?}\n", key, value);
      }
    }
    // The guard's figures (octet quantize), readable: the JSON above is for tools.
    if (auto it = model->metadata.find("guard"); it != model->metadata.end()) {
      const nlohmann::json j = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
      auto guard = GuardReportFromJson(j);
      if (guard.ok()) {
        fmt::print("{}", FormatGuardReport(*guard));
      } else {
        fmt::print("guard: unreadable metadata: {}\n", guard.status().message());
      }
    }
  }
  for (ValueId id : g.inputs()) fmt::print("input  {}: {}\n", g.value(id).name, shape_of(id));
  for (ValueId id : g.outputs()) fmt::print("output {}: {}\n", g.value(id).name, shape_of(id));
  if (!exec.ok() && valid.ok() && symbolic.symbols.empty()) {
    fmt::print("(shapes unknown: {})\n", exec.status().message());
  }
  if (!exec.ok() && valid.ok() && !symbolic.symbols.empty()) {
    fmt::print("(shapes unknown with {} = 1: {}; give the input shapes with --input-shape NAME=D0,D1,...)\n",
               fmt::join(symbolic.symbols, " = 1, "), exec.status().message());
  }
  if (!symbolic.note.empty()) fmt::print("({})\n", symbolic.note);
  if (model->qdq_groups > 0 || !model->qdq_kept_float.empty()) {
    fmt::print("quantized ONNX model: {} QDQ group(s) imported as int8 operators\n", model->qdq_groups);
    for (const std::string& why : model->qdq_kept_float) fmt::print("  not int8: {}\n", why);
  }
  std::map<std::string, int> op_counts;
  for (int n = 0; n < g.num_nodes(); ++n) {
    const Node& node = g.node(n);
    ++op_counts[node.op_type];
    int64_t params = 0;
    std::vector<std::string> ins, outs;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        ins.push_back("_");
        continue;
      }
      const Value& v = g.value(in);
      ins.push_back(v.name);
      if (v.kind == ValueKind::kConstant) params += v.data.NumElements();
    }
    for (ValueId out : node.outputs) outs.push_back(shape_of(out));
    fmt::print("{:4} {:<32} {:<20} ({}) -> {}{}{}\n", n, node.name, node.op_type, fmt::join(ins, ", "),
               fmt::join(outs, ", "), params > 0 ? fmt::format("  params {}", params) : "",
               exec.ok() && exec->is_folded(n) ? "  [folded]" : "");
    // The qparams of the integers a node writes and of its integer weights: what they mean.
    for (ValueId id : node.outputs) {
      if (id != kNoValue && g.value(id).qparams) {
        fmt::print("       {} qparams {}\n", g.value(id).name, g.value(id).qparams->ToString());
      }
    }
    for (ValueId id : node.inputs) {
      if (id != kNoValue && g.value(id).kind == ValueKind::kConstant && g.value(id).qparams) {
        fmt::print("       {} qparams {}\n", g.value(id).name, g.value(id).qparams->ToString());
      }
    }
  }
  std::vector<std::string> counts;
  for (const auto& [op, n] : op_counts) counts.push_back(fmt::format("{} {}", op, n));
  fmt::print("ops: {}\n", fmt::join(counts, ", "));
  if (exec.ok()) {
    fmt::print("activation arena: {} bytes{}\n", exec->arena_bytes(),
               symbolic.symbols.empty() ? "" : fmt::format(" with {} = 1", fmt::join(symbolic.symbols, " = 1, ")));
  }
  if (!valid.ok()) return ReportFailure(valid.WithContext(fmt::format("failed to inspect '{}'", c.model)));
  return kExitOk;
}

}  // namespace

Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text, const char* option) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument("{} must be NAME=VALUE, got '{}'", option, text);
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Result<LoadedModel> LoadModelFile(const std::string& path) {
  LoadedModel model;
  if (IsOctetFile(path) || std::filesystem::path(path).extension() == ".octet") {
    OCTET_ASSIGN_OR_RETURN(OctetModel octet, ReadOctetFile(path));
    model.graph = std::move(octet.graph);
    model.is_octet = true;
    model.metadata = std::move(octet.metadata);
    model.format_version = octet.format_version;
    return model;
  }
#if OCTET_WITH_ONNX
  QdqImportReport qdq;
  OnnxImportOptions options;
  options.qdq_report = &qdq;
  OCTET_ASSIGN_OR_RETURN(model.graph, ReadOnnxModel(path, options));
  model.qdq_kept_float = std::move(qdq.kept_float);
  model.qdq_groups = qdq.groups;
  return model;
#else
  return Unimplemented("failed to load '{}': this build of octet has no ONNX import (built without protobuf)",
                       path);
#endif
}

Result<Graph> LoadModel(const std::string& path) {
  OCTET_ASSIGN_OR_RETURN(LoadedModel model, LoadModelFile(path));
  return std::move(model.graph);
}

bool IsQuantizedModel(const LoadedModel& model) {
  // An ONNX model whose QDQ groups became int8 operators at import (io/onnx/qdq_import.h) counts as one.
  return model.is_octet || std::any_of(model.graph.nodes().begin(), model.graph.nodes().end(),
                                       [](const Node& n) { return n.domain == kInt8Domain; });
}

OpRegistry RegistryFor(const LoadedModel& model) {
  return IsQuantizedModel(model) ? QuantizedGraphRegistry() : FloatOpRegistry();
}

namespace {

Result<Shape> ParseDims(const std::string& text) {
  std::vector<int64_t> dims;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(begin, end - begin);
    if (part.empty() || part.size() > 15 || part.find_first_not_of("0123456789") != std::string::npos) {
      return InvalidArgument("--input-shape dims must be comma-separated non-negative integers, got '{}'", text);
    }
    dims.push_back(std::stoll(part));
    begin = end + 1;
  }
  return Shape::Create(dims);
}

}  // namespace

Status ParseInputShapes(const std::vector<std::string>& specs, CompileOptions& options) {
  for (const std::string& s : specs) {
    OCTET_ASSIGN_OR_RETURN(auto kv, SplitAssignment(s, "--input-shape"));
    OCTET_ASSIGN_OR_RETURN(Shape shape, ParseDims(kv.second));
    options.input_shapes.emplace_back(kv.first, std::move(shape));
  }
  return OkStatus();
}

void AddModelCommands(CLI::App& app, CommandRegistry& registry) {
  auto run = std::make_shared<RunCommand>();
  CLI::App* r = app.add_subcommand("run", "Run a model on .npy inputs and write its outputs as .npy files");
  r->add_option("model", run->model, "The model (.onnx or .octet)")->required()->type_name("MODEL");
  r->add_option("--input", run->inputs,
                "A graph input and its file, NAME=FILE.npy (repeat for each input; none for a model without inputs)")
      ->type_name("NAME=FILE");
  r->add_option("--output-dir", run->output_dir, "Folder for <output name>.npy files (created if missing)")
      ->required()
      ->type_name("DIR");
  r->add_option("--float-fusion", run->float_fusion,
                "Relu/Clip folded into the float Conv/Gemm before them: on (default; the same outputs, faster) or off")
      ->check(CLI::IsMember({"on", "off"}))
      ->type_name("on|off");
  run->context.AddTo(r, 1);
  registry.Add(r, [run] { return RunModel(*run); });

  auto inspect = std::make_shared<InspectCommand>();
  CLI::App* i = app.add_subcommand("inspect", "Print a model's graph: nodes, shapes and parameter counts");
  i->add_option("model", inspect->model, "The model (.onnx or .octet)")->required()->type_name("MODEL");
  i->add_option("--input-shape", inspect->input_shapes, "Shape for an input with unknown dims, NAME=D0,D1,...")
      ->type_name("NAME=DIMS");
  registry.Add(i, [inspect] { return Inspect(*inspect); });
}

}  // namespace octet::cli
