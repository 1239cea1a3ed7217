// Sensitivity analysis on the real int8 kernels (see sensitivity.h).
#include "numeric_suite/sensitivity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/executor.h"
#include "core/latency.h"
#include "numeric_suite/metrics.h"
#include "quant/calibrate.h"
#include "quant/fused_ops.h"
#include "quant/quantized_registry.h"
#include "quant/training/top1.h"

namespace octet {
namespace {

using Batches = std::span<const std::vector<Tensor>>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool SameShapes(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].shape() != b[k].shape()) return false;
  }
  return true;
}

Result<Executor> CompileFor(const Graph& g, const Context& context, const OpRegistry& registry,
                            const std::vector<Tensor>& batch) {
  if (batch.size() != g.inputs().size()) {
    return InvalidArgument("a batch has {} tensors, graph '{}' has {} inputs", batch.size(), g.name(),
                           g.inputs().size());
  }
  CompileOptions co;
  for (size_t k = 0; k < batch.size(); ++k) co.input_shapes.emplace_back(g.value(g.inputs()[k]).name, batch[k].shape());
  return Executor::Compile(g, context, registry, co);
}

// The outputs of `g` on every batch; one compiled executor per run of batches with equal shapes.
Result<std::vector<std::vector<Tensor>>> RunBatches(const Graph& g, const OpRegistry& registry, const Context& context,
                                                    Batches batches) {
  std::vector<std::vector<Tensor>> outputs;
  std::optional<Executor> exec;
  for (size_t b = 0; b < batches.size(); ++b) {
    if (b == 0 || !SameShapes(batches[b], batches[b - 1])) {
      auto compiled = CompileFor(g, context, registry, batches[b]);
      if (!compiled.ok()) return compiled.status().WithContext(fmt::format("evaluation batch {}", b));
      exec.emplace(std::move(*compiled));
    }
    auto y = exec->Run(batches[b]);
    if (!y.ok()) return y.status().WithContext(fmt::format("evaluation batch {}", b));
    outputs.push_back(std::move(*y));
  }
  return outputs;
}

// Each node's CPU time per run by node name, median over `runs` runs after one warm-up (folded nodes: absent).
Result<std::map<std::string, double>> MedianNodeCpuUs(const Graph& g, const OpRegistry& registry,
                                                      const Context& one_thread, const std::vector<Tensor>& batch,
                                                      int runs) {
  OCTET_ASSIGN_OR_RETURN(Executor exec, CompileFor(g, one_thread, registry, batch));
  const size_t nodes = static_cast<size_t>(g.num_nodes());
  std::vector<int64_t> started(nodes, 0);
  std::vector<std::vector<double>> samples(nodes);
  RunOptions options;
  options.before_node.push_back([&](const NodeCall& call) {
    started[static_cast<size_t>(call.node_index)] = NowNs(LatencyClock::kThreadCpu);
    return OkStatus();
  });
  options.after_node.push_back([&](const NodeCall& call) {
    const size_t n = static_cast<size_t>(call.node_index);
    samples[n].push_back(MicrosecondsSince(LatencyClock::kThreadCpu, started[n]));
    return OkStatus();
  });
  OCTET_RETURN_IF_ERROR(exec.Run(batch).status());  // warm-up: caches, lazily touched memory
  for (int r = 0; r < runs; ++r) OCTET_RETURN_IF_ERROR(exec.Run(batch, options).status());
  std::map<std::string, double> median;
  for (size_t n = 0; n < nodes; ++n) {
    if (samples[n].empty()) continue;
    median[g.node(static_cast<int>(n)).name] = MedianUs(std::move(samples[n]));
  }
  return median;
}

bool Meets(double value, double target, bool higher_is_better) {
  return higher_is_better ? value >= target : value <= target;
}

std::string Describe(const std::set<std::string>& keep_float, size_t candidates) {
  if (keep_float.empty()) return "every node int8";
  if (keep_float.size() == candidates) return "every candidate node float";
  return fmt::format("nodes {} float", fmt::join(keep_float, ", "));
}

// Converts the calibrated graph with a set of nodes kept float, runs it on the evaluation batches and applies the
// metric; each set is evaluated once.
class Evaluator {
 public:
  Evaluator(const PreparedGraph& prepared, const SensitivityOptions& options, const Context& context,
            Batches evaluation, std::vector<std::vector<Tensor>> float_outputs, size_t candidates, ProgressFn progress,
            int64_t planned)
      : prepared_(prepared),
        options_(options),
        context_(context),
        evaluation_(evaluation),
        float_outputs_(std::move(float_outputs)),
        registry_(QuantizedGraphRegistry()),
        candidates_(candidates),
        progress_(std::move(progress)),
        planned_(planned) {}

  Result<double> operator()(const std::set<std::string>& keep_float) {
    if (auto it = cache_.find(keep_float); it != cache_.end()) return it->second;
    const std::string what = fmt::format("failed to evaluate '{}' with {}", prepared_.graph().name(),
                                         Describe(keep_float, candidates_));
    ConvertOptions convert = options_.convert;
    convert.keep_float = keep_float;
    auto graph = Convert(prepared_, convert);
    if (!graph.ok()) return graph.status().WithContext(what);
    auto outputs = RunBatches(*graph, registry_, context_, evaluation_);
    if (!outputs.ok()) return outputs.status().WithContext(what);
    auto value = options_.metric.evaluate(float_outputs_, *outputs);
    if (!value.ok()) return value.status().WithContext(what);
    if (std::isnan(*value)) return InvalidArgument("{}: metric '{}' gave NaN", what, options_.metric.name);
    cache_.emplace(keep_float, *value);
    ++evaluations_;
    if (progress_) progress_(std::min(evaluations_, planned_ - 1), planned_);
    return *value;
  }

  // A value another worker computed (SensitivityOptions::spread): cached and counted as if evaluated here.
  void Record(const std::set<std::string>& keep_float, double value) {
    if (cache_.emplace(keep_float, value).second) ++evaluations_;
  }

  int64_t evaluations() const { return evaluations_; }
  void Finish() {
    if (progress_) progress_(planned_, planned_);
  }

 private:
  const PreparedGraph& prepared_;
  const SensitivityOptions& options_;
  const Context& context_;
  Batches evaluation_;
  std::vector<std::vector<Tensor>> float_outputs_;
  OpRegistry registry_;
  size_t candidates_;
  ProgressFn progress_;
  int64_t planned_;
  std::map<std::set<std::string>, double> cache_;
  int64_t evaluations_ = 0;
};

// The nodes to analyse: options.nodes (checked) or every node Convert quantizes, in graph order.
Result<std::vector<std::string>> Candidates(const PreparedGraph& prepared, const SensitivityOptions& options,
                                            const ConvertReport& report) {
  if (options.nodes.empty()) return report.quantized;
  std::vector<std::string> out;
  for (const std::string& name : options.nodes) {
    if (std::find(report.quantized.begin(), report.quantized.end(), name) != report.quantized.end()) {
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      continue;
    }
    for (const ConvertReport::FloatNode& f : report.kept_float) {
      if (f.node == name) {
        return InvalidArgument("cannot analyse node '{}' ({}): Convert keeps it float ({})", name, f.op_type,
                               f.reason);
      }
    }
    return InvalidArgument("cannot analyse node '{}': the prepared (fused) graph '{}' has no node of that name", name,
                           prepared.graph().name());
  }
  return out;
}

// The keep-float proposal (see sensitivity.h).
Status Propose(Evaluator& evaluate, SensitivityReport& report) {
  const double target = *report.target;
  const bool hib = report.higher_is_better;
  if (Meets(report.all_quantized, target, hib)) {
    report.achieved = report.all_quantized;
    report.target_reached = true;
    return OkStatus();
  }
  std::vector<std::string> chosen;
  std::set<std::string> kept;
  double value = report.all_quantized;
  for (const NodeSensitivity& n : report.nodes) {
    chosen.push_back(n.name);
    kept.insert(n.name);
    OCTET_ASSIGN_OR_RETURN(value, evaluate(kept));
    if (Meets(value, target, hib)) break;
  }
  if (!Meets(value, target, hib)) {
    report.keep_float = chosen;
    report.achieved = value;
    report.target_reached = false;
    return OkStatus();
  }
  // Greedy by rank can pick nodes a later pick made unnecessary: drop each that is not needed, last added first.
  for (size_t i = chosen.size(); i-- > 0;) {
    if (chosen.size() == 1) break;
    std::set<std::string> without = kept;
    without.erase(chosen[i]);
    OCTET_ASSIGN_OR_RETURN(const double v, evaluate(without));
    if (Meets(v, target, hib)) {
      kept = std::move(without);
      value = v;
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  report.keep_float = chosen;
  report.achieved = value;
  report.target_reached = true;
  return OkStatus();
}

nlohmann::json SensitivityJsonNumber(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

SensitivityMetric OutputSqnrMetric() {
  SensitivityMetric m;
  m.name = "output_sqnr_db";
  m.higher_is_better = true;
  m.evaluate = [](Batches float_outputs, Batches outputs) -> Result<double> {
    if (float_outputs.size() != outputs.size()) {
      return InvalidArgument("output SQNR: {} float batches against {} batches", float_outputs.size(), outputs.size());
    }
    ErrorSums sums;
    for (size_t b = 0; b < outputs.size(); ++b) {
      if (float_outputs[b].size() != outputs[b].size()) {
        return InvalidArgument("output SQNR: batch {} has {} float outputs and {} outputs", b, float_outputs[b].size(),
                               outputs[b].size());
      }
      for (size_t k = 0; k < outputs[b].size(); ++k) {
        if (float_outputs[b][k].dtype() != DType::kF32) continue;  // integer outputs (indices) carry no SQNR
        Status s = sums.Accumulate(float_outputs[b][k], outputs[b][k]);
        if (!s.ok()) return s.WithContext(fmt::format("output SQNR of output {} in batch {}", k, b));
      }
    }
    if (sums.count == 0) return InvalidArgument("output SQNR: the graph has no f32 output");
    return sums.Sqnr();
  };
  return m;
}

SensitivityMetric AccuracyMetric(Tensor labels, int output_index) {
  SensitivityMetric m;
  m.name = "accuracy";
  m.higher_is_better = true;
  m.evaluate = [labels = std::move(labels), output_index](Batches, Batches outputs) -> Result<double> {
    if (labels.dtype() != DType::kS32) {
      return InvalidArgument("accuracy: labels must be int32, got {}", DTypeName(labels.dtype()));
    }
    auto label = [&labels](int64_t i) -> int64_t { return labels.data<int32_t>()[i]; };
    int64_t seen = 0, right = 0;
    for (size_t b = 0; b < outputs.size(); ++b) {
      if (output_index < 0 || static_cast<size_t>(output_index) >= outputs[b].size()) {
        return InvalidArgument("accuracy: the graph has {} outputs, no output {}", outputs[b].size(), output_index);
      }
      const Tensor& y = outputs[b][static_cast<size_t>(output_index)];
      if (y.dtype() != DType::kF32 || y.shape().rank() != 2) {
        return InvalidArgument("accuracy: output {} must be f32 [samples, classes], got {} {}", output_index,
                               DTypeName(y.dtype()), y.shape());
      }
      const int64_t n = y.shape().dim(0), k = y.shape().dim(1);
      if (seen + n > labels.NumElements()) {
        return InvalidArgument("accuracy: {} labels for more samples than that (batch {} ends at sample {})",
                               labels.NumElements(), b, seen + n);
      }
      for (int64_t i = 0; i < n; ++i, ++seen) {
        const float* row = y.data<float>() + i * k;
        const int64_t want = label(seen);
        if (want < 0 || want >= k) {
          return InvalidArgument("accuracy: label {} of sample {} is outside [0, {})", want, seen, k);
        }
        right += training::ArgMax({row, static_cast<size_t>(k)}) == want ? 1 : 0;
      }
    }
    if (seen != labels.NumElements()) {
      return InvalidArgument("accuracy: {} labels for {} evaluation samples", labels.NumElements(), seen);
    }
    if (seen == 0) return InvalidArgument("accuracy: no evaluation samples");
    return static_cast<double>(right) / static_cast<double>(seen);
  };
  return m;
}

Result<SensitivityReport> AnalyzeSensitivity(const Graph& float_graph, const QConfigMapping& mapping,
                                             std::span<const std::vector<Tensor>> calibration_batches,
                                             std::span<const std::vector<Tensor>> evaluation_batches,
                                             const SensitivityOptions& options) {
  const std::string where = fmt::format("failed to analyse the sensitivity of '{}'", float_graph.name());
  if (!options.metric.evaluate) return InvalidArgument("{}: the metric has no evaluate function", where);
  if (evaluation_batches.empty()) return InvalidArgument("{}: no evaluation batch", where);
  if (!options.convert.keep_float.empty()) {
    return InvalidArgument("{}: options.convert.keep_float must be empty (the analysis chooses it)", where);
  }
  if (options.target && std::isnan(*options.target)) return InvalidArgument("{}: the target is NaN", where);
  std::optional<Context> own_context;
  if (options.context == nullptr) {
    OCTET_ASSIGN_OR_RETURN(own_context, Context::Create());
  }
  const Context& context = options.context != nullptr ? *options.context : *own_context;

  // Observers are filled once; every configuration below reuses them.
  PrepareOptions prepare_options = options.prepare;
  if (prepare_options.context == nullptr) prepare_options.context = &context;
  auto prepared = Prepare(float_graph, mapping, prepare_options);
  if (!prepared.ok()) return prepared.status().WithContext(where);
  CalibrateOptions calibrate_options;
  if (options.progress) calibrate_options.progress = [](int64_t, int64_t) {};
  if (Status s = Calibrate(*prepared, context, calibration_batches, calibrate_options); !s.ok()) {
    return s.WithContext(where);
  }

  ConvertReport convert_report;
  auto all_int8 = Convert(*prepared, options.convert, &convert_report);
  if (!all_int8.ok()) return all_int8.status().WithContext(where);
  auto candidates = Candidates(*prepared, options, convert_report);
  if (!candidates.ok()) return candidates.status().WithContext(where);
  if (candidates->empty()) return InvalidArgument("{}: Convert quantizes no node of it", where);

  const OpRegistry float_registry = QuantFloatRegistry();
  auto float_outputs = RunBatches(prepared->graph(), float_registry, context, evaluation_batches);
  if (!float_outputs.ok()) return float_outputs.status().WithContext(where + ": the float graph");

  const size_t n = candidates->size();
  const int64_t planned = 2 + 2 * static_cast<int64_t>(n) + (options.target ? static_cast<int64_t>(n) : 0);
  Evaluator evaluate(*prepared, options, context, evaluation_batches, std::move(*float_outputs), n,
                     options.progress, planned);

  SensitivityReport report;
  report.metric = options.metric.name;
  report.higher_is_better = options.metric.higher_is_better;
  report.evaluation_batches = static_cast<int64_t>(evaluation_batches.size());
  report.target = options.target;
  const std::set<std::string> everything(candidates->begin(), candidates->end());
  OCTET_ASSIGN_OR_RETURN(report.all_quantized, evaluate({}));
  OCTET_ASSIGN_OR_RETURN(report.float_value, evaluate(everything));

  // Configuration 2j keeps every candidate but j float (only j int8), 2j + 1 keeps j alone float.
  std::vector<std::set<std::string>> configs;
  for (const std::string& name : *candidates) {
    std::set<std::string> others = everything;
    others.erase(name);
    configs.push_back(std::move(others));
    configs.push_back({name});
  }
  std::vector<double> values;
  if (options.spread) {
    OCTET_ASSIGN_OR_RETURN(values, options.spread(configs.size(), [&](size_t i) { return evaluate(configs[i]); }));
    if (values.size() != configs.size()) return Internal("{}: spread returned {} values", where, values.size());
    for (size_t i = 0; i < configs.size(); ++i) evaluate.Record(configs[i], values[i]);
  } else {
    for (const std::set<std::string>& config : configs) {
      OCTET_ASSIGN_OR_RETURN(const double v, evaluate(config));
      values.push_back(v);
    }
  }
  for (size_t j = 0; j < n; ++j) {
    const std::string& name = (*candidates)[j];
    NodeSensitivity s;
    s.name = name;
    s.op_type = prepared->graph().node(prepared->graph().FindNode(name)).op_type;
    const int q = all_int8->FindNode(name);
    s.int8_op_type = q >= 0 ? all_int8->node(q).op_type : "";
    s.only_this_quantized = values[2 * j];
    s.all_but_this_quantized = values[2 * j + 1];
    s.int8_latency_us = s.float_latency_us = kNaN;
    report.nodes.push_back(std::move(s));
  }

  // Rank: the gain of keeping the node float, then the worse only-this, then graph order (stable sort).
  const double sign = report.higher_is_better ? 1.0 : -1.0;
  auto gain = [&](const NodeSensitivity& s) {
    const double g = sign * (s.all_but_this_quantized - report.all_quantized);
    return std::isnan(g) ? 0.0 : g;
  };
  std::stable_sort(report.nodes.begin(), report.nodes.end(), [&](const NodeSensitivity& a, const NodeSensitivity& b) {
    if (gain(a) != gain(b)) return gain(a) > gain(b);
    return sign * a.only_this_quantized < sign * b.only_this_quantized;
  });
  for (size_t i = 0; i < report.nodes.size(); ++i) report.nodes[i].rank = static_cast<int>(i) + 1;

  if (options.latency_runs > 0) {
    ContextOptions one;
    one.isa_cap = context.enabled_isas();
    one.threads = 1;
    OCTET_ASSIGN_OR_RETURN(const Context one_thread, Context::Create(one));
    const std::vector<Tensor>& batch = evaluation_batches[0];
    auto int8_us = MedianNodeCpuUs(*all_int8, QuantizedGraphRegistry(), one_thread, batch, options.latency_runs);
    if (!int8_us.ok()) return int8_us.status().WithContext(where + ": timing the int8 graph");
    auto float_us = MedianNodeCpuUs(prepared->graph(), float_registry, one_thread, batch, options.latency_runs);
    if (!float_us.ok()) return float_us.status().WithContext(where + ": timing the float graph");
    for (NodeSensitivity& s : report.nodes) {
      if (auto it = int8_us->find(s.name); it != int8_us->end()) s.int8_latency_us = it->second;
      if (auto it = float_us->find(s.name); it != float_us->end()) s.float_latency_us = it->second;
    }
  }

  if (report.target) {
    if (Status s = Propose(evaluate, report); !s.ok()) return s.WithContext(where);
  }
  evaluate.Finish();
  report.evaluations = evaluate.evaluations();
  return report;
}

nlohmann::json SensitivityJson(const SensitivityReport& report) {
  nlohmann::json j;
  j["metric"] = report.metric;
  j["higher_is_better"] = report.higher_is_better;
  j["target"] = report.target ? SensitivityJsonNumber(*report.target) : nlohmann::json(nullptr);
  j["float"] = SensitivityJsonNumber(report.float_value);
  j["all_quantized"] = SensitivityJsonNumber(report.all_quantized);
  j["evaluation_batches"] = report.evaluation_batches;
  j["evaluations"] = report.evaluations;
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeSensitivity& s : report.nodes) {
    nlohmann::json n;
    n["name"] = s.name;
    n["op"] = s.op_type;
    n["int8_op"] = s.int8_op_type;
    n["only_this_quantized"] = SensitivityJsonNumber(s.only_this_quantized);
    n["all_but_this_quantized"] = SensitivityJsonNumber(s.all_but_this_quantized);
    if (!std::isnan(s.int8_latency_us)) n["int8_latency_us"] = s.int8_latency_us;
    if (!std::isnan(s.float_latency_us)) n["float_latency_us"] = s.float_latency_us;
    n["rank"] = s.rank;
    nodes.push_back(std::move(n));
  }
  j["nodes"] = std::move(nodes);
  j["keep_float"] = report.keep_float;
  j["achieved"] = report.achieved ? SensitivityJsonNumber(*report.achieved) : nlohmann::json(nullptr);
  j["target_reached"] = report.target ? nlohmann::json(report.target_reached) : nlohmann::json(nullptr);
  return j;
}

}  // namespace octet
