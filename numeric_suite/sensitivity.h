// Sensitivity analysis (DESIGN.md §7, issue 9): which nodes of a statically quantized graph cost the most accuracy,
// what each costs and saves in latency on the real kernels, and the smallest set of nodes to keep float for a
// target. The float graph is prepared and calibrated once; every configuration is a Convert of that one calibrated
// PreparedGraph with a different ConvertOptions::keep_float, run on octet's int8 kernels.
//
// For each candidate node (every node Convert quantizes when nothing is kept float):
//   only_this_quantized:    the metric with this node int8 and every other candidate float;
//   all_but_this_quantized: the metric with every other candidate int8 and this one float.
// Nodes are ranked by how much keeping them float improves on the all-int8 graph (all_but_this - all_quantized,
// the sign flipped for lower-is-better metrics); ties go to the worse only_this, then to graph order.
// The keep-float proposal adds nodes in rank order, evaluating the graph after each addition, until the target is
// met; then drops every node (last added first) whose removal still meets it. When even every candidate float
// misses the target, the proposal is every candidate and `target_reached` is false.
// Static quantization only: nodes with a dynamic QConfig stay float in Convert and so are never candidates.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/progress.h"
#include "quant/qconfig_mapping.h"

namespace octet {

// A figure of merit for a whole evaluation set: receives, per evaluation batch, the graph outputs of the float
// (prepared, fused) graph and of the graph under test, both in graph output order.
struct SensitivityMetric {
  std::string name;  // for reports, e.g. "output_sqnr_db", "accuracy"
  bool higher_is_better = true;
  std::function<Result<double>(std::span<const std::vector<Tensor>> float_outputs,
                               std::span<const std::vector<Tensor>> outputs)>
      evaluate;
};

// SQNR in dB of every f32 graph output over every batch together (ns metrics' ErrorSums):
// 10 log10(sum x^2 / sum (x - y)^2); +inf when the outputs equal the float graph's exactly.
SensitivityMetric OutputSqnrMetric();

// Top-1 accuracy in [0, 1] of graph output `output_index` ([N, classes] per batch) against `labels` (s32,
// one per sample of all evaluation batches in order). Fails on a count or shape mismatch or a label out of range.
SensitivityMetric AccuracyMetric(Tensor labels, int output_index = 0);

struct SensitivityOptions {
  SensitivityMetric metric = OutputSqnrMetric();
  // The value the proposal must reach (>= for higher-is-better metrics, <= otherwise); unset: no proposal.
  std::optional<double> target;
  // Fusion and observers' context (Prepare) and the numerics profile (Convert); keep_float must be empty.
  PrepareOptions prepare;
  ConvertOptions convert;
  // The nodes to analyse, by name in the prepared (fused) graph; empty: every node Convert quantizes.
  std::vector<std::string> nodes;
  // Context for calibration and evaluation (nullptr: Context::Create() with one thread). Latency is always
  // measured on one thread, with the same ISAs.
  const Context* context = nullptr;
  // Latency: median over this many timed runs of the first evaluation batch (after one warm-up run); 0 skips it.
  int latency_runs = 5;
  // Called after each evaluated configuration with (done, total so far); unset: nothing is reported.
  ProgressFn progress;
  // Spreads the per-node evaluations (two per candidate) over workers, e.g. MPI ranks (`octet sensitivity --mpi`):
  // called with their count and the function evaluating one by index, returns every value in index order; each
  // worker must return all of them. Unset: evaluated here, in order. The report is the same either way.
  std::function<Result<std::vector<double>>(size_t count, const std::function<Result<double>(size_t)>& one)> spread;
};

struct NodeSensitivity {
  std::string name;
  std::string op_type;       // of the float (fused) node, e.g. "Conv"
  std::string int8_op_type;  // what Convert made of it, e.g. "QConv"
  double only_this_quantized = 0;
  double all_but_this_quantized = 0;
  // Calling-thread CPU time of the node alone per run, median of SensitivityOptions::latency_runs, one thread; the
  // int8 node in the all-int8 graph and its float twin in the float graph. NaN when not measured or folded.
  double int8_latency_us = 0;
  double float_latency_us = 0;
  int rank = 0;  // 1 = the node whose float form helps most
};

struct SensitivityReport {
  std::string metric;
  bool higher_is_better = true;
  int64_t evaluation_batches = 0;
  double float_value = 0;     // every candidate float (+inf SQNR: the float graph itself)
  double all_quantized = 0;   // every candidate int8
  std::vector<NodeSensitivity> nodes;  // by rank
  std::optional<double> target;
  // With a target: the proposal, in the order it was built, and the metric it gives (all_quantized when the
  // all-int8 graph already meets the target, with keep_float empty).
  std::vector<std::string> keep_float;
  std::optional<double> achieved;
  bool target_reached = false;
  int64_t evaluations = 0;  // configurations converted and run
};

// Prepares `float_graph` with `mapping`, calibrates it on `calibration_batches` (one tensor per graph input each,
// in graph input order), and evaluates on `evaluation_batches` as described above. Fails naming the step
// (prepare, calibrate, convert with which nodes float, run) and the node or value at fault; on an unknown node in
// options.nodes or one Convert does not quantize; on no evaluation batch; on a metric giving NaN.
Result<SensitivityReport> AnalyzeSensitivity(const Graph& float_graph, const QConfigMapping& mapping,
                                             std::span<const std::vector<Tensor>> calibration_batches,
                                             std::span<const std::vector<Tensor>> evaluation_batches,
                                             const SensitivityOptions& options = {});

// The report's "sensitivity" section (the numeric-suite report schema, version 1): infinite values are written
// as null (+inf SQNR: exact), unmeasured latencies omitted.
nlohmann::json SensitivityJson(const SensitivityReport& report);

}  // namespace octet
