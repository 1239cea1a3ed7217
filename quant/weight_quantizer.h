// Quantizing constant weights for the dynamic and weight-only passes: a weight observer (the QConfig's factory,
// per channel along the operator's output-channel axis) sees the float constant once, its qparams quantize it
// (ops/quantize.h), and the s8 result becomes a new constant carrying those qparams. Weights used by several nodes
// are quantized once.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "quant/qconfig.h"

namespace octet {

// The output-channel axis of a weight input: Conv 0, Gemm transB ? 0 : 1, MatMul (rank-2 weight) 1, LSTM/GRU W and R
// 1 (the gate rows of [num_directions, G * hidden, K]).
struct WeightUseInfo {
  int slot = 1;
  int axis = 0;
  const char* role = "weight";  // names the weight in node names and errors
};

class WeightQuantizer {
 public:
  // `context` runs the observers and the quantization (nullptr: DefaultObserverContext()).
  explicit WeightQuantizer(const Context* context) : context_(context) {}

  // The id of the s8 constant "<weight name>_quantized" holding weight `value` quantized by `spec` along `axis`
  // (created on first use). Fails naming `node` and the weight when it is not an f32 constant, the observer rejects
  // it (non-finite values), or the qparams are not s8.
  Result<ValueId> Quantize(Graph& graph, const Node& node, ValueId value, const ObserverSpec& spec, int axis);

 private:
  const Context* context_;
  std::map<std::pair<ValueId, std::string>, ValueId> done_;  // (weight, observer + axis) -> quantized constant
};

}  // namespace octet
