// Fusion passes (PyTorch's fuse_modules / FX fusion patterns, on the graph):
//   FuseActivations: Conv+Relu, Gemm+Relu (LinearReLU), MatMul+Relu, Add+Relu (add_relu) become one fused node
//   (quant/fused_ops.h) that keeps the first node's name and takes over the Relu's output value.
//   FoldConstantNodes: ONNX Constant nodes (a `value` tensor) become constant values, so what reads them (Clip's
//   bounds, Reshape's shape) sees constants, as it would have with initializers.
//   Fuse: FoldConstantNodes, FoldBatchNorm, FuseTransformerPatterns (decomposed LayerNorm and GELU to one node,
//   Div by a scalar constant to Mul; quant/fuse_transformer.h), then FuseActivations, so Conv+BatchNormalization+Relu becomes one fused Conv.
// A pair fuses only when the first node's output feeds nothing but the Relu and is no graph output (otherwise the
// pre-activation value is still needed).
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace octet {

struct FuseReport {
  std::vector<std::string> folded_constant_nodes;  // Constant nodes turned into constant values
  std::vector<std::string> folded_batch_norms;  // BatchNormalization nodes folded away
  std::vector<std::string> fused_activations;   // Relu nodes absorbed, in graph order
  std::vector<std::string> fused_layer_norms;   // LayerNormalization nodes made of decomposed chains
  std::vector<std::string> fused_gelus;         // Gelu nodes made of decomposed chains
  std::vector<std::string> scale_divisions;     // Div nodes by a scalar constant made Mul
};

// Returns the names of the Relu nodes absorbed.
Result<std::vector<std::string>> FuseActivations(Graph& graph);
// Returns the names of the Constant nodes folded.
std::vector<std::string> FoldConstantNodes(Graph& graph);
Result<FuseReport> Fuse(Graph& graph);

}  // namespace octet
