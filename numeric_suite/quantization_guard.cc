// The numeric guard after Convert (numeric_suite/quantization_guard.h).
#include "numeric_suite/quantization_guard.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/executor.h"
#include "numeric_suite/compare_model.h"
#include "numeric_suite/graph_matching.h"
#include "numeric_suite/html_text.h"
#include "numeric_suite/loggers.h"
#include "numeric_suite/metrics.h"
#include "quant/calibrate.h"
#include "quant/fused_ops.h"
#include "quant/quantized_registry.h"

namespace octet {
namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The context of `options`, or one owned by `owned`.
Result<const Context*> GuardContext(const GuardOptions& options, std::unique_ptr<Context>& owned) {
  if (options.context != nullptr) return options.context;
  OCTET_ASSIGN_OR_RETURN(Context c, Context::Create());
  owned = std::make_unique<Context>(std::move(c));
  return owned.get();
}

// Runs `graph` on every batch, compiling once per distinct set of input shapes; returns the outputs per batch.
Result<std::vector<std::vector<Tensor>>> RunAll(const Graph& graph, const OpRegistry& registry, const Context& context,
                                                std::span<const std::vector<Tensor>> batches) {
  std::vector<std::vector<Tensor>> results;
  std::unique_ptr<Executor> executor;
  std::vector<Shape> compiled;
  for (size_t b = 0; b < batches.size(); ++b) {
    std::vector<Shape> shapes;
    for (const Tensor& t : batches[b]) shapes.push_back(t.shape());
    if (executor == nullptr || shapes != compiled) {
      CompileOptions options;
      for (size_t i = 0; i < shapes.size() && i < graph.inputs().size(); ++i) {
        options.input_shapes.emplace_back(graph.value(graph.inputs()[i]).name, shapes[i]);
      }
      auto e = Executor::Compile(graph, context, registry, options);
      if (!e.ok()) return e.status().WithContext(fmt::format("failed to compile graph '{}'", graph.name()));
      executor = std::make_unique<Executor>(std::move(*e));
      compiled = std::move(shapes);
    }
    auto out = executor->Run(batches[b]);
    if (!out.ok()) return out.status().WithContext(fmt::format("batch {}", b));
    results.push_back(std::move(*out));
  }
  return results;
}

// The fused float graph's outputs on every batch: the reference every int8 candidate is measured against.
Result<std::vector<std::vector<Tensor>>> FloatOutputs(const Graph& float_graph, const Context& context,
                                                      std::span<const std::vector<Tensor>> batches) {
  OCTET_ASSIGN_OR_RETURN(Graph fused, FloatReferenceGraph(float_graph, /*fuse=*/true));
  auto outputs = RunAll(fused, QuantFloatRegistry(), context, batches);
  if (!outputs.ok()) return outputs.status().WithContext("failed to run the float model for the guard");
  return outputs;
}

// SQNR of every f32 output of `quantized` against `reference`, over all batches.
Result<std::vector<GuardOutput>> OutputSqnr(const Graph& quantized, const Context& context,
                                            std::span<const std::vector<Tensor>> batches,
                                            const std::vector<std::vector<Tensor>>& reference) {
  auto results = RunAll(quantized, QuantizedGraphRegistry(), context, batches);
  if (!results.ok()) return results.status().WithContext("failed to run the int8 model for the guard");
  std::vector<GuardOutput> outputs;
  const size_t n = quantized.outputs().size();
  for (size_t i = 0; i < n; ++i) {
    ErrorSums sums;
    bool is_float = true;
    for (size_t b = 0; b < results->size() && is_float; ++b) {
      const Tensor& x = reference[b].at(i);
      const Tensor& y = (*results)[b].at(i);
      if (x.dtype() != DType::kF32 || y.dtype() != DType::kF32) {
        is_float = false;
        break;
      }
      OCTET_RETURN_IF_ERROR(sums.Accumulate(x, y).WithContext(
          fmt::format("failed to compare output '{}'", quantized.value(quantized.outputs()[i]).name)));
    }
    if (!is_float) continue;  // integer outputs (an ArgMax) have no SQNR
    outputs.push_back({quantized.value(quantized.outputs()[i]).name, sums.Sqnr()});
  }
  return outputs;
}

double Worst(const std::vector<GuardOutput>& outputs) {
  double worst = kInf;
  for (const GuardOutput& o : outputs) worst = std::isnan(o.sqnr_db) ? -kInf : std::min(worst, o.sqnr_db);
  return worst;
}

int64_t SampleCount(std::span<const std::vector<Tensor>> batches) {
  int64_t n = 0;
  for (const std::vector<Tensor>& batch : batches) {
    n += batch.empty() || batch[0].shape().rank() == 0 ? 1 : batch[0].shape().dim(0);
  }
  return n;
}

// The worst layers by shadow SQNR and by clipping, from one pass of the numeric suite over the guard's samples.
Status FindWorstLayers(const Graph& float_graph, const Graph& quantized, const Context& context,
                       std::span<const std::vector<Tensor>> batches, const GuardOptions& options, GuardReport& report) {
  CompareOptions compare;
  compare.context = &context;
  compare.shadow = true;
  compare.activations = true;                          // clipping is counted on the propagated pass
  compare.accumulators = false;                        // not needed here, and slow on large models
  RunningSqnrLogger activation_logger, shadow_logger;  // constant memory, whatever the number of samples
  auto prepared = PrepareModelOutputs(float_graph, quantized, compare, &activation_logger, &shadow_logger);
  if (!prepared.ok()) {
    // A graph with no int8 node the suite can match (nothing was quantized) has no layer to name.
    if (prepared.status().message().find("no quantized node") != std::string::npos) return OkStatus();
    return prepared.status();
  }
  for (size_t b = 0; b < batches.size(); ++b) {
    OCTET_RETURN_IF_ERROR((*prepared)->Run(batches[b]).WithContext(fmt::format("guard batch {}", b)));
  }
  std::map<std::string, GuardLayer> layers;
  for (const ValueComparison& a : (*prepared)->activations()) {
    if (a.slot != 0) continue;
    GuardLayer& layer = layers[a.node];
    layer.node = a.node;
    layer.op = a.op;
    if (a.clipping && a.clipping->total > 0) {
      layer.clipped_fraction = static_cast<double>(a.clipping->clipped) / static_cast<double>(a.clipping->total);
    }
  }
  for (const ValueComparison& s : (*prepared)->shadow()) {
    if (s.slot != 0) continue;
    GuardLayer& layer = layers[s.node];
    layer.node = s.node;
    layer.op = s.op;
    const double db = s.sqnr_db();
    if (!std::isinf(db) || db < 0) layer.shadow_sqnr_db = std::isnan(db) ? -kInf : db;
  }
  std::vector<GuardLayer> by_shadow, by_clipping;
  for (const auto& [name, layer] : layers) {
    if (layer.shadow_sqnr_db) by_shadow.push_back(layer);
    if (layer.clipped_fraction && *layer.clipped_fraction > options.min_clipped_fraction) {
      by_clipping.push_back(layer);
    }
  }
  // Graph order breaks ties, so the report does not depend on the map's name order.
  std::map<std::string, size_t> order;
  for (size_t i = 0; i < (*prepared)->activations().size(); ++i) {
    order.emplace((*prepared)->activations()[i].node, i);
  }
  std::stable_sort(by_shadow.begin(), by_shadow.end(), [&](const GuardLayer& a, const GuardLayer& b) {
    if (*a.shadow_sqnr_db != *b.shadow_sqnr_db) return *a.shadow_sqnr_db < *b.shadow_sqnr_db;
    return order[a.node] < order[b.node];
  });
  std::stable_sort(by_clipping.begin(), by_clipping.end(), [&](const GuardLayer& a, const GuardLayer& b) {
    if (*a.clipped_fraction != *b.clipped_fraction) return *a.clipped_fraction > *b.clipped_fraction;
    return order[a.node] < order[b.node];
  });
  const size_t keep = static_cast<size_t>(std::max(options.worst_layers, 0));
  if (by_shadow.size() > keep) by_shadow.resize(keep);
  if (by_clipping.size() > keep) by_clipping.resize(keep);
  report.worst_by_shadow = std::move(by_shadow);
  report.worst_by_clipping = std::move(by_clipping);
  return OkStatus();
}

// A JSON number, or null for a non-finite one.
json GuardJsonNumber(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json LayerJson(const GuardLayer& layer) {
  json j = {{"node", layer.node}, {"op", layer.op}};
  if (layer.shadow_sqnr_db) j["shadow_sqnr_db"] = GuardJsonNumber(*layer.shadow_sqnr_db);
  if (layer.clipped_fraction) j["clipped_fraction"] = *layer.clipped_fraction;
  return j;
}

// Reads a guard JSON SQNR: null is +inf (exact) for outputs and fixes.
Result<double> ReadDb(const json& j, const char* key, const char* where) {
  const auto it = j.find(key);
  if (it == j.end()) return InvalidArgument("guard report: {} has no '{}'", where, key);
  if (it->is_null()) return kInf;
  if (!it->is_number()) return InvalidArgument("guard report: {} '{}' is not a number", where, key);
  return it->get<double>();
}

Result<std::string> ReadString(const json& j, const char* key, const char* where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return InvalidArgument("guard report: {} has no string '{}'", where, key);
  return it->get<std::string>();
}

Result<std::vector<GuardLayer>> ReadLayers(const json& j, const char* key) {
  std::vector<GuardLayer> layers;
  const auto it = j.find(key);
  if (it == j.end()) return layers;
  if (!it->is_array()) return InvalidArgument("guard report: '{}' is not an array", key);
  for (const json& e : *it) {
    GuardLayer layer;
    OCTET_ASSIGN_OR_RETURN(layer.node, ReadString(e, "node", key));
    OCTET_ASSIGN_OR_RETURN(layer.op, ReadString(e, "op", key));
    if (e.contains("shadow_sqnr_db")) {
      OCTET_ASSIGN_OR_RETURN(double db, ReadDb(e, "shadow_sqnr_db", key));
      layer.shadow_sqnr_db = e["shadow_sqnr_db"].is_null() ? -kInf : db;
    }
    if (e.contains("clipped_fraction")) {
      if (!e["clipped_fraction"].is_number()) return InvalidArgument("guard report: {} 'clipped_fraction'", key);
      layer.clipped_fraction = e["clipped_fraction"].get<double>();
    }
    layers.push_back(std::move(layer));
  }
  return layers;
}

std::string DbText(double db) {
  if (std::isinf(db) && db > 0) return "exact";
  return FormatFixed(db, 1) + " dB";
}

std::string LayerText(const GuardLayer& layer) {
  std::string text = fmt::format("{} ({}): shadow SQNR {}", layer.node, layer.op,
                                 layer.shadow_sqnr_db ? DbText(*layer.shadow_sqnr_db) : std::string("n/a"));
  if (layer.clipped_fraction) text += fmt::format(", clipped {}%", FormatDecimal(100 * *layer.clipped_fraction, 2));
  return text;
}

}  // namespace

GuardSplit SplitGuardBatches(std::span<const std::vector<Tensor>> batches) {
  if (batches.size() < kGuardMinBatchesToHoldBack) return {batches, batches, "calibration"};
  const size_t held = std::max<size_t>(1, batches.size() / 5);
  return {batches.first(batches.size() - held), batches.last(held), "held-back"};
}

Result<GuardReport> CheckQuantization(const Graph& float_graph, const Graph& quantized,
                                      std::span<const std::vector<Tensor>> batches, std::string samples_source,
                                      const GuardOptions& options) {
  if (batches.empty()) return InvalidArgument("failed to check the quantization: no samples to run");
  std::unique_ptr<Context> owned;
  OCTET_ASSIGN_OR_RETURN(const Context* context, GuardContext(options, owned));
  GuardReport report;
  report.min_sqnr_db = options.min_sqnr_db;
  report.samples = SampleCount(batches);
  report.samples_source = std::move(samples_source);
  OCTET_ASSIGN_OR_RETURN(auto reference, FloatOutputs(float_graph, *context, batches));
  OCTET_ASSIGN_OR_RETURN(report.outputs, OutputSqnr(quantized, *context, batches, reference));
  if (report.outputs.empty()) {
    return InvalidArgument("failed to check the quantization of '{}': it has no float output to measure",
                           float_graph.name());
  }
  report.worst_sqnr_db = Worst(report.outputs);
  report.passed = report.worst_sqnr_db >= options.min_sqnr_db;
  if (!report.passed)
    OCTET_RETURN_IF_ERROR(FindWorstLayers(float_graph, quantized, *context, batches, options, report));
  return report;
}

Status MeasureGuardFixes(const Graph& float_graph, std::span<const std::vector<Tensor>> batches,
                         const GuardFixCandidates& candidates, const GuardOptions& options, GuardReport& report) {
  std::unique_ptr<Context> owned;
  OCTET_ASSIGN_OR_RETURN(const Context* context, GuardContext(options, owned));
  OCTET_ASSIGN_OR_RETURN(auto reference, FloatOutputs(float_graph, *context, batches));
  auto measure = [&](const std::string& option, Result<Graph> graph) {
    if (!graph.ok()) return;
    auto outputs = OutputSqnr(*graph, *context, batches, reference);
    if (!outputs.ok() || outputs->empty()) return;
    const double db = Worst(*outputs);
    report.fixes.push_back({option, db, db >= options.min_sqnr_db});
  };
  for (const GuardFixCandidates::Alternative& alternative : candidates.alternatives) {
    auto prepared = Prepare(float_graph, alternative.mapping, candidates.prepare);
    if (!prepared.ok()) continue;
    CalibrateOptions quiet;
    quiet.progress = [](int64_t, int64_t) {};
    if (!Calibrate(*prepared, *context, candidates.calibration_batches, quiet).ok()) continue;
    measure(alternative.option, Convert(*prepared, candidates.convert));
  }
  if (candidates.calibrated != nullptr) {
    std::vector<std::string> nodes;
    for (const auto* list : {&report.worst_by_shadow, &report.worst_by_clipping}) {
      for (const GuardLayer& layer : *list) {
        if (std::find(nodes.begin(), nodes.end(), layer.node) == nodes.end()) nodes.push_back(layer.node);
      }
    }
    if (nodes.size() > static_cast<size_t>(std::max(candidates.keep_float_layers, 0))) {
      nodes.resize(static_cast<size_t>(candidates.keep_float_layers));
    }
    for (const std::string& node : nodes) {
      ConvertOptions convert = candidates.convert;
      convert.keep_float.insert(node);
      measure("--skip " + node, Convert(*candidates.calibrated, convert));
    }
  }
  return OkStatus();
}

json GuardReportJson(const GuardReport& report) {
  json j = {{"passed", report.passed},
            {"min_sqnr_db", report.min_sqnr_db},
            {"samples", report.samples},
            {"samples_source", report.samples_source},
            {"worst_sqnr_db", GuardJsonNumber(report.worst_sqnr_db)}};
  json outputs = json::array();
  for (const GuardOutput& o : report.outputs) outputs.push_back({{"name", o.name}, {"sqnr_db", GuardJsonNumber(o.sqnr_db)}});
  j["outputs"] = std::move(outputs);
  json shadow = json::array(), clipping = json::array(), fixes = json::array();
  for (const GuardLayer& layer : report.worst_by_shadow) shadow.push_back(LayerJson(layer));
  for (const GuardLayer& layer : report.worst_by_clipping) clipping.push_back(LayerJson(layer));
  for (const GuardFix& fix : report.fixes) {
    fixes.push_back({{"option", fix.option}, {"sqnr_db", GuardJsonNumber(fix.sqnr_db)}, {"passes", fix.passes}});
  }
  j["worst_by_shadow"] = std::move(shadow);
  j["worst_by_clipping"] = std::move(clipping);
  j["fixes"] = std::move(fixes);
  return j;
}

Result<GuardReport> GuardReportFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("guard report: not a JSON object");
  GuardReport report;
  if (!j.contains("passed") || !j["passed"].is_boolean()) return InvalidArgument("guard report: no bool 'passed'");
  report.passed = j["passed"].get<bool>();
  OCTET_ASSIGN_OR_RETURN(report.min_sqnr_db, ReadDb(j, "min_sqnr_db", "the report"));
  if (!j.contains("samples") || !j["samples"].is_number_integer()) {
    return InvalidArgument("guard report: no integer 'samples'");
  }
  report.samples = j["samples"].get<int64_t>();
  OCTET_ASSIGN_OR_RETURN(report.samples_source, ReadString(j, "samples_source", "the report"));
  OCTET_ASSIGN_OR_RETURN(report.worst_sqnr_db, ReadDb(j, "worst_sqnr_db", "the report"));
  if (!j.contains("outputs") || !j["outputs"].is_array()) return InvalidArgument("guard report: no 'outputs' array");
  for (const json& o : j["outputs"]) {
    GuardOutput out;
    OCTET_ASSIGN_OR_RETURN(out.name, ReadString(o, "name", "outputs"));
    OCTET_ASSIGN_OR_RETURN(out.sqnr_db, ReadDb(o, "sqnr_db", "outputs"));
    report.outputs.push_back(std::move(out));
  }
  OCTET_ASSIGN_OR_RETURN(report.worst_by_shadow, ReadLayers(j, "worst_by_shadow"));
  OCTET_ASSIGN_OR_RETURN(report.worst_by_clipping, ReadLayers(j, "worst_by_clipping"));
  if (j.contains("fixes")) {
    if (!j["fixes"].is_array()) return InvalidArgument("guard report: 'fixes' is not an array");
    for (const json& f : j["fixes"]) {
      GuardFix fix;
      OCTET_ASSIGN_OR_RETURN(fix.option, ReadString(f, "option", "fixes"));
      OCTET_ASSIGN_OR_RETURN(fix.sqnr_db, ReadDb(f, "sqnr_db", "fixes"));
      fix.passes = f.value("passes", false);
      report.fixes.push_back(std::move(fix));
    }
  }
  return report;
}

std::string FormatGuardReport(const GuardReport& report) {
  std::string samples = fmt::format("{} ", report.samples);
  if (report.samples_source == "held-back") {
    samples += "held-back calibration sample";
  } else if (report.samples_source == "calibration") {
    samples += "calibration sample";
  } else {
    samples += report.samples_source + " sample";
  }
  if (report.samples != 1) samples += "s";
  if (report.samples_source == "calibration") samples += " (too few batches to hold some back)";
  std::string text;
  if (report.passed) {
    text += fmt::format("guard: passed: output SQNR >= {} (--min-sqnr) on {}:", DbText(report.min_sqnr_db), samples);
  } else {
    text += fmt::format("warning: guard: output SQNR {} is below {} (--min-sqnr) on {}:", DbText(report.worst_sqnr_db),
                        DbText(report.min_sqnr_db), samples);
  }
  for (size_t i = 0; i < report.outputs.size(); ++i) {
    text += fmt::format("{} {} {}", i ? "," : "", report.outputs[i].name, DbText(report.outputs[i].sqnr_db));
  }
  text += "\n";
  if (report.passed) return text;
  if (!report.worst_by_shadow.empty()) {
    text += "  worst layers by shadow SQNR (each int8 layer against its float twin on the same input):\n";
    for (const GuardLayer& layer : report.worst_by_shadow) text += "    " + LayerText(layer) + "\n";
  }
  if (!report.worst_by_clipping.empty()) {
    text += "  most clipping (outputs saturated at the int8 limits):\n";
    for (const GuardLayer& layer : report.worst_by_clipping) text += "    " + LayerText(layer) + "\n";
  }
  const GuardFix* best = nullptr;
  if (!report.fixes.empty()) {
    text += "  fixes measured on the same samples (worst output SQNR):\n";
    for (const GuardFix& fix : report.fixes) {
      text += fmt::format("    {}: {}{}\n", fix.option, DbText(fix.sqnr_db), fix.passes ? " (passes)" : "");
      if (fix.passes && (best == nullptr || fix.sqnr_db > best->sqnr_db)) best = &fix;
    }
  }
  if (best != nullptr) {
    text += fmt::format("  fix: quantize again with {} ({})\n", best->option, DbText(best->sqnr_db));
  } else {
    text +=
        "  no measured fix reaches the threshold: `octet sensitivity` finds the layers to keep float (--skip), "
        "or try another --activation-observer or --backend\n";
  }
  return text;
}

}  // namespace octet
