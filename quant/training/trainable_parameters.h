// Which constants of a float graph training updates, named as PyTorch names them: the weights and biases of Conv,
// Gemm and MatMul (a constant operand), BatchNormalization's scale and bias, LSTM's W, R and B, the f32 table of a
// Gather (nn.Embedding's weight), and the constant
// operand of an Add that follows a MatMul (a Linear's bias exported as MatMul + Add). BatchNormalization's running
// mean and variance are buffers: training-mode forwards update them, the optimizer does not.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"

namespace octet::training {

enum class ParameterRole { kWeight, kBias, kBatchNormScale, kBatchNormBias, kRecurrentWeight };

struct TrainableParameter {
  ValueId value = kNoValue;  // a kConstant f32 value of the graph
  int node = -1;             // the (first) node that reads it
  ParameterRole role = ParameterRole::kWeight;
};

struct TrainableState {
  std::vector<TrainableParameter> parameters;  // in node order, each value once
  std::vector<ValueId> buffers;                // BatchNormalization running mean and variance
};

// Scans the graph's nodes in order. A constant read by two nodes is listed once (the first reader's role).
TrainableState FindTrainableParameters(const Graph& graph);

const char* ParameterRoleName(ParameterRole role);

}  // namespace octet::training
