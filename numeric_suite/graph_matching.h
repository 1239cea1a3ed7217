// How the numeric suite pairs a float graph with its int8 conversion: nodes by name (Convert, QuantizeDynamic and
// QuantizeWeightOnly keep every node's name), values by output slot, int8 values dequantized with their qparams.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/tensor_view.h"

namespace octet {

// The float graph as the quantization passes saw it: Fuse (constant nodes folded, BatchNorm folded, ReLUs fused)
// when `fuse` is set, so node names and outputs line up with the int8 graph (PyTorch compares the fused float
// model likewise). Compile the result with QuantFloatRegistry().
Result<Graph> FloatReferenceGraph(const Graph& float_graph, bool fuse);

// True for the int8 operators that compute (QConv, QGemm, QAdd, DynamicQLSTM, ...), false for Quantize,
// Dequantize, Requantize, the fused float operators and every default-domain operator.
bool IsInt8ComputeNode(const Node& node);

// The s8/u8 constant with qparams feeding input `slot` of node `node_index` of `graph`, directly (QConv's weight) or
// through a Dequantize node (weight-only graphs); kNoValue when there is none.
ValueId QuantizedConstantInput(const Graph& graph, int node_index, size_t slot);

// A node of the int8 graph and its float twin of the same name.
struct MatchedNode {
  std::string name;
  int float_node = -1;
  int quantized_node = -1;
  std::string float_op;      // op type of the float node ("Conv")
  std::string quantized_op;  // op type of the int8 node ("QConv"; "Conv" for a weight-only node)
  bool weight_only = false;  // a float operator on dequantized int8 weights
};

// Int8 compute nodes and weight-only nodes of `quantized` with a float node of the same name in `float_graph`, in
// the int8 graph's order. A non-empty `allow_list` keeps only nodes whose name, float op type or int8 op type it
// lists (PyTorch's allow_list of module types).
std::vector<MatchedNode> MatchNodes(const Graph& float_graph, const Graph& quantized,
                                    const std::vector<std::string>& allow_list = {});

// An f32 copy of `view`: f32 as is, u8/s8/s32 dequantized with `qparams` (per tensor or per channel). Fails, naming
// `what`, for integers without qparams or qparams that do not fit the shape.
Result<Tensor> DequantizedCopy(const ConstTensorView& view, const QParams* qparams, const std::string& what);
Result<Tensor> DequantizedCopy(const Tensor& tensor, const QParams* qparams, const std::string& what);

}  // namespace octet
