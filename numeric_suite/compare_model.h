// CompareModelOutputs and CompareModelStub (torch.ao.ns._numeric_suite), on octet's real int8 kernels: a float
// graph and its int8 conversion run on the same batches, matched node by node (graph_matching.h).
//   * activations (CompareModelOutputs): each matched node's outputs in the float graph against the int8 graph's,
//     dequantized; the error is propagated through the int8 graph. With per-layer counters of requantization
//     clipping and int32 accumulator headroom (layer_counters.h).
//   * shadow (CompareModelStub): each int8 node against its float twin (Shadow) run on the int8 node's own
//     dequantized inputs; the error is not propagated.
//   * outputs: each graph output, by position (both graphs keep the output names).
// Works for static, dynamic (DynamicQGemm, DynamicQLSTM: their outputs are f32 already) and weight-only graphs, and
// for models with several inputs and outputs (LSTM states): batches hold one tensor per graph input in the float
// graph's input order; the int8 graph's inputs are fed by name.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "numeric_suite/graph_matching.h"
#include "numeric_suite/layer_counters.h"
#include "numeric_suite/loggers.h"
#include "numeric_suite/metrics.h"

namespace octet {

struct CompareOptions {
  // Compare against the fused float graph (FloatReferenceGraph): BatchNorm folded, ReLUs fused, as Convert saw it.
  bool fuse_float = true;
  // Node names or op types (float or int8) to compare; empty: every matched node (MatchNodes).
  std::vector<std::string> allow_list;
  // Runs both graphs (nullptr: a default context).
  const Context* context = nullptr;
  bool activations = true;  // compare propagated activations (and count clipping / headroom)
  bool shadow = false;      // run each int8 node's float twin (CompareModelStub)
  bool counters = true;     // clipping fraction and accumulator headroom
  // With counters: also recompute the int32 accumulators (scalar reference kernels, slow on large models).
  bool accumulators = true;
};

// One compared value, over every batch seen.
struct ValueComparison {
  std::string name;      // node name, with ":<k>" for output slot k > 0
  std::string node;
  size_t slot = 0;       // the node's output slot
  std::string value;     // the float graph's value name
  std::string op;        // the int8 graph's op type
  std::string float_op;
  Shape shape;           // of the last batch
  ErrorSums sums;        // float value x against dequantized int8 value y, all batches
  std::optional<QParams> qparams;         // the int8 value's qparams (absent for f32 outputs of dynamic ops)
  std::optional<ClipCount> clipping;      // activations of u8/s8 outputs, output slot 0
  std::optional<int64_t> max_abs_accumulator;  // activations of QConv / QGemm / QMatMul

  double sqnr_db() const { return sums.Sqnr(); }
  // max |x - y| in units of the int8 value's scale (per tensor); NaN without qparams.
  double max_abs_error_lsb() const;
};

// PrepareModelOutputs' result: both graphs compiled for comparison. Run() each batch, then read the results (or the
// logger: GetMatchingActivations).
class PreparedModelOutputs {
 public:
  ~PreparedModelOutputs();
  // Runs one batch through both graphs and hands every compared value to the loggers.
  Status Run(std::span<const Tensor> inputs);

  const std::vector<ValueComparison>& activations() const { return activations_; }
  const std::vector<ValueComparison>& shadow() const { return shadow_; }
  const std::vector<ValueComparison>& outputs() const { return outputs_; }
  const std::vector<MatchedNode>& matches() const { return matches_; }
  const Graph& float_graph() const { return float_graph_; }
  const Graph& quantized_graph() const { return quantized_graph_; }
  Logger& activation_logger() const { return *activation_logger_; }
  Logger& shadow_logger() const { return *shadow_logger_; }

 private:
  friend Result<std::unique_ptr<PreparedModelOutputs>> PrepareModelOutputs(const Graph&, const Graph&,
                                                                             const CompareOptions&, Logger*, Logger*);
  struct Impl;
  PreparedModelOutputs() = default;

  CompareOptions options_;
  Graph float_graph_;
  Graph quantized_graph_;
  std::vector<MatchedNode> matches_;
  std::vector<ValueComparison> activations_, shadow_, outputs_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Logger> owned_activation_logger_, owned_shadow_logger_;
  Logger* activation_logger_ = nullptr;
  Logger* shadow_logger_ = nullptr;
};

// Prepares the comparison of `float_graph` with `quantized` (PyTorch's prepare_model_outputs, plus the shadow
// comparison when options.shadow). Loggers default to an OutputLogger and a ShadowLogger owned by the result; a
// given logger must outlive it. Fails when no node matches, or a graph does not compile.
Result<std::unique_ptr<PreparedModelOutputs>> PrepareModelOutputs(const Graph& float_graph, const Graph& quantized,
                                                                   const CompareOptions& options = {},
                                                                   Logger* activation_logger = nullptr,
                                                                   Logger* shadow_logger = nullptr);

// What the default OutputLogger of `prepared` holds: per matched value, every batch of both graphs (PyTorch's
// get_matching_activations). Fails when a user logger that keeps no tensors was given.
Result<std::map<std::string, StoringLogger::Stats>> GetMatchingActivations(const PreparedModelOutputs& prepared);

// Runs every batch and returns the propagated activation comparison (compare_model_outputs).
Result<std::vector<ValueComparison>> CompareModelOutputs(const Graph& float_graph, const Graph& quantized,
                                                         std::span<const std::vector<Tensor>> batches,
                                                         const CompareOptions& options = {},
                                                         Logger* logger = nullptr);

// Runs every batch and returns the shadow comparison (compare_model_stub): each int8 node against its float twin
// on the same dequantized inputs.
Result<std::vector<ValueComparison>> CompareModelStub(const Graph& float_graph, const Graph& quantized,
                                                      std::span<const std::vector<Tensor>> batches,
                                                      const CompareOptions& options = {}, Logger* logger = nullptr);

}  // namespace octet
