// `octet compare`: weights, propagated activations and shadows of an int8 model against its float model.
#include "tools/octet/compare_command.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/file_util.h"
#include "numeric_suite/compare_model.h"
#include "numeric_suite/compare_weights.h"
#include "numeric_suite/report_html.h"
#include "numeric_suite/report_json.h"
#include "tools/octet/context_options.h"
#include "tools/octet/model_command.h"

namespace octet::cli {
namespace {

struct CompareCommand {
  std::string float_model;
  std::string quantized_model;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::vector<std::string> allow;
  std::string json_output;
  std::string html_output;
  ContextFlags context;
};

constexpr size_t kWorstLayers = 10;

std::string Db(double v) {
  if (std::isnan(v)) return "-";
  if (v == INFINITY) return "exact";
  return fmt::format("{:.2f}", v);
}

void PrintLayer(const ValueComparison& a, const std::map<std::string, double>& weight_db,
                const std::map<std::string, const ValueComparison*>& shadow, size_t width) {
  auto w = weight_db.find(a.name);
  auto s = shadow.find(a.name);
  const std::string clipped = a.clipping && a.clipping->total > 0
                                  ? fmt::format("{:.3f}", 100.0 * static_cast<double>(a.clipping->clipped) /
                                                              static_cast<double>(a.clipping->total))
                                  : "-";
  const std::string headroom =
      a.max_abs_accumulator ? fmt::format("{:.1f}b", AccumulatorHeadroomBits(*a.max_abs_accumulator)) : "-";
  fmt::print("{:<{}}  {:<14} {:>10} {:>10} {:>10} {:>9} {:>9}\n", a.name, width, a.op,
             w == weight_db.end() ? "-" : Db(w->second), Db(a.sqnr_db()),
             s == shadow.end() ? "-" : Db(s->second->sqnr_db()), clipped, headroom);
}

// Batches in the float graph's input order, and the report's record of the files.
Result<std::vector<std::vector<Tensor>>> InputBatches(const CompareCommand& c, const Graph& graph,
                                                      ReportSources& sources) {
  std::map<std::string, std::vector<std::string>> files;
  for (const std::string& spec : c.inputs) {
    OCTET_ASSIGN_OR_RETURN(auto kv, SplitAssignment(spec, "--input"));
    files[kv.first].push_back(kv.second);
  }
  std::vector<std::string> names;
  for (ValueId id : graph.inputs()) names.push_back(graph.value(id).name);
  for (const auto& [name, paths] : files) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return InvalidArgument("'{}' has no input named '{}' (its inputs: {})", c.float_model, name,
                             fmt::join(names, ", "));
    }
  }
  std::vector<std::vector<Tensor>> batches;
  for (const std::string& name : names) {
    auto it = files.find(name);
    if (it == files.end()) return InvalidArgument("input '{}' is not given (use --input {}=FILE.npy)", name, name);
    if (!batches.empty() && it->second.size() != batches.size()) {
      return InvalidArgument("--input gives {} files for '{}' but {} for '{}'", it->second.size(), name,
                             batches.size(), names.front());
    }
    batches.resize(it->second.size());
    for (size_t b = 0; b < it->second.size(); ++b) {
      OCTET_ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(it->second[b]));
      sources.inputs.push_back({name, it->second[b], t.shape()});
      batches[b].push_back(std::move(t));
    }
  }
  return batches;
}

int Compare(const CompareCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  const std::string where = fmt::format("failed to compare '{}' with '{}'", c.quantized_model, c.float_model);
  Result<LoadedModel> float_model = LoadModelFile(c.float_model);
  if (!float_model.ok()) return ReportFailure(float_model.status());
  if (float_model->is_octet) return ReportUsage(fmt::format("'{}' is a .octet model: give the float ONNX model first",
                                                            c.float_model));
  Result<LoadedModel> quantized = LoadModelFile(c.quantized_model);
  if (!quantized.ok()) return ReportFailure(quantized.status());

  ReportSources sources;
  sources.float_model = c.float_model;
  sources.quantized_model = c.quantized_model;
  auto batches = InputBatches(c, float_model->graph, sources);
  if (!batches.ok()) return ReportFailure(batches.status().WithContext(where));

  CompareOptions options;
  options.context = &*context;
  options.shadow = true;
  options.allow_list = c.allow;
  auto fused = FloatReferenceGraph(float_model->graph, options.fuse_float);
  if (!fused.ok()) return ReportFailure(fused.status().WithContext(where));
  auto weights = CompareWeights(*fused, quantized->graph);
  if (!weights.ok()) return ReportFailure(weights.status().WithContext(where));
  auto prepared = PrepareModelOutputs(float_model->graph, quantized->graph, options);
  if (!prepared.ok()) return ReportFailure(prepared.status().WithContext(where));
  for (size_t b = 0; b < batches->size(); ++b) {
    if (Status s = (*prepared)->Run((*batches)[b]); !s.ok()) {
      return ReportFailure(s.WithContext(fmt::format("{}: batch {}", where, b)));
    }
  }
  const PreparedModelOutputs& p = **prepared;

  // Build every file before writing any.
  std::string json_text, html_text;
  if (!c.json_output.empty() || !c.html_output.empty()) {
    auto report = BuildReportJson(sources, *weights, p.activations(), p.shadow(), p.outputs());
    if (!report.ok()) return ReportFailure(report.status().WithContext(where));
    if (!c.json_output.empty()) json_text = report->dump(1) + "\n";
    if (!c.html_output.empty()) {
      auto html = RenderReportHtml(*report);
      if (!html.ok()) return ReportFailure(html.status().WithContext(where));
      html_text = std::move(*html);
    }
  }
  PrintComparisonTable(*weights, p);
  if (!c.json_output.empty()) {
    if (Status s = WriteFileAtomically(c.json_output, json_text); !s.ok()) return ReportFailure(s);
    fmt::print("report: {}\n", c.json_output);
  }
  if (!c.html_output.empty()) {
    if (Status s = WriteFileAtomically(c.html_output, html_text); !s.ok()) return ReportFailure(s);
    fmt::print("HTML report: {}\n", c.html_output);
  }
  return kExitOk;
}

}  // namespace

void PrintComparisonTable(const std::vector<WeightComparison>& weights, const PreparedModelOutputs& p) {
  std::map<std::string, double> weight_db;  // the worst weight of each node
  for (const WeightComparison& w : weights) {
    const double db = Sqnr(w.float_weight, w.dequantized).value();
    auto [it, inserted] = weight_db.emplace(w.node, db);
    if (!inserted) it->second = std::min(it->second, db);
  }
  std::map<std::string, const ValueComparison*> shadow;
  for (const ValueComparison& s : p.shadow()) shadow[s.name] = &s;
  size_t width = 5;
  for (const ValueComparison& a : p.activations()) width = std::max(width, a.name.size());
  const auto header = [&] {
    fmt::print("{:<{}}  {:<14} {:>10} {:>10} {:>10} {:>9} {:>9}\n", "layer", width, "op", "weight dB", "act dB",
               "shadow dB", "clipped%", "headroom");
  };
  // The worst layers first (lowest shadow SQNR: where the error is made), so that a model with hundreds of layers
  // does not have to be searched by hand; then every layer in graph order.
  std::vector<const ValueComparison*> ranked;
  for (const ValueComparison& a : p.activations()) {
    if (shadow.count(a.name) != 0) ranked.push_back(&a);
  }
  const auto shadow_db = [&](const ValueComparison* a) {
    const double db = shadow[a->name]->sqnr_db();
    return std::isnan(db) ? -INFINITY : db;
  };
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const ValueComparison* a, const ValueComparison* b) { return shadow_db(a) < shadow_db(b); });
  if (ranked.size() > kWorstLayers) ranked.resize(kWorstLayers);
  std::vector<const ValueComparison*> all;
  for (const ValueComparison& a : p.activations()) all.push_back(&a);
  if (!ranked.empty()) {
    fmt::print("worst {} of {} layers (lowest shadow SQNR):\n", ranked.size(), all.size());
    header();
    for (const ValueComparison* a : ranked) PrintLayer(*a, weight_db, shadow, width);
    fmt::print("\nall layers:\n");
  }
  header();
  for (const ValueComparison* a : all) PrintLayer(*a, weight_db, shadow, width);
  for (const ValueComparison& o : p.outputs()) fmt::print("output {}: SQNR {} dB\n", o.name, Db(o.sqnr_db()));
}

void AddCompareCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<CompareCommand>();
  CLI::App* sub = app.add_subcommand("compare", "Compare an int8 model with its float model, layer by layer");
  sub->add_option("float_model", c->float_model, "The float model (.onnx)")->required();
  sub->add_option("quantized_model", c->quantized_model, "The int8 model (.octet)")->required();
  sub->add_option("--input", c->inputs, "A batch for an input (repeat a name for more batches)")
      ->type_name("NAME=FILE.npy")
      ->required();
  sub->add_option("--allow", c->allow, "Compare only these nodes or op types (Conv, QConv, ...)")
      ->type_name("NODE|OP");
  sub->add_option("--json", c->json_output, "Write the report as JSON (schema version 1)");
  sub->add_option("--html", c->html_output, "Write the report as one self-contained HTML page");
  c->context.AddTo(sub, 1);
  registry.Add(sub, [c] { return Compare(*c); });
}

}  // namespace octet::cli
