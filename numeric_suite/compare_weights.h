// CompareWeights (torch.ao.ns._numeric_suite.compare_weights): each quantized weight of an int8 graph against the
// float weight it came from.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

struct WeightComparison {
  std::string name;       // the float weight's value name ("cnn.conv1.weight")
  std::string node;       // the node both graphs call by this name
  std::string op;         // the int8 graph's op type ("QConv", "DynamicQLSTM", or "Conv" for weight-only)
  size_t slot = 0;        // the node's input slot
  Tensor float_weight;    // f32
  Tensor quantized;       // the int8 constant as stored (s8/u8)
  Tensor dequantized;     // f32, quantized dequantized with qparams (per channel where they are)
  QParams qparams;
  // The output-channel axis (the report's per-channel ranges): WeightChannelAxis().
  int channel_axis = 0;
};

// The per-output-channel axis of a weight read at input `slot` of `node`: the qparams' axis when per channel, else
// the last axis for QMatMul / MatMul and transB = 0 Gemm weights, 1 for (Dynamic)LSTM / GRU W and R
// ([num_directions, gates * hidden, in]), 0 otherwise (QConv, Conv, QGemm with transB).
int WeightChannelAxis(const Node& node, const Tensor& weight, const QParams& qparams);

// For every node of `quantized` that reads an int8 constant with qparams at some input slot -- directly (QConv,
// QGemm, QMatMul, DynamicQGemm, DynamicQLSTM, ...) or through a Dequantize (weight-only graphs) -- the f32 constant
// at the same slot of the node of the same name in `float_graph` (give the fused float graph,
// FloatReferenceGraph(), when BatchNorm was folded). Nodes without a float twin are skipped; a twin whose slot is not
// an f32 constant of the same shape is an error naming node, slot and both shapes.
Result<std::vector<WeightComparison>> CompareWeights(const Graph& float_graph, const Graph& quantized);

}  // namespace octet
