// Which operators the static flow quantizes and how their values are observed (PyTorch 1.13's native
// BackendConfig, in graph terms). Prepare uses it to place observers; Convert will use it to pick int8 operators.
//   kWeighted  Conv, Gemm, MatMul (plain or fused): activation input 0, a weight at input 1 (observed by the weight
//              observer, per channel along the output-channel axis), bias untouched (int32 at Convert); the
//              output observed. MatMul with a non-constant input 1 observes it as an activation instead.
//   kGeneral   Add, Mul, AveragePool, GlobalAveragePool, HardSwish, LeakyRelu, Sigmoid, Tanh, HardSigmoid,
//              Softmax, Gelu, LayerNormalization (input 0 only; Scale and B are constants): float inputs and the
//              output observed, each with its own observer.
//   kShared    MaxPool, GlobalMaxPool, Relu, Clip, Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Identity,
//              Dropout, Concat, Split (every output): the output shares the observer (hence the qparams) of its data
//              inputs, as PyTorch's
//              OUTPUT_SHARE_OBSERVER_WITH_INPUT, so the int8 operator needs no requantization.
// Everything else stays float; Convert puts quantize/dequantize around it.
#pragma once

#include <vector>

#include "core/graph.h"

namespace octet {

enum class QuantOpKind { kFloat, kWeighted, kGeneral, kShared };

struct QuantOpInfo {
  QuantOpKind kind = QuantOpKind::kFloat;
  std::vector<int> activation_inputs;  // input slots observed as activations (or sharing, for kShared)
  int weight_input = -1;               // kWeighted: the weight's input slot
  int weight_channel_axis = 0;         // kWeighted: the output-channel axis of the weight
};

// `weight_rank` is the rank of input 1 when it is a constant, else 0 (MatMul then has two activation inputs).
QuantOpInfo LookupQuantOp(const Node& node, int weight_rank);

}  // namespace octet
