// QuantizeWeightOnly: int8 weights, float compute (DESIGN.md §6). For every Conv, Gemm, MatMul (constant f32 weight
// at input 1), LSTM and GRU (constant W and R) whose QConfig (from the mapping) is not none, each weight is quantized
// once by the QConfig's weight observer -- per channel along the output-channel axis for per-channel observers
// (Conv 0, Gemm transB ? 0 : 1, MatMul 1, LSTM/GRU 1) -- into an s8 constant "<weight>_quantized" with its qparams,
// and an octet.Dequantize node "<node>.<role>_dequantize" (role weight, W or R) feeds the float operator in its
// place. Nodes keep their names and operators; the executor folds each Dequantize at Compile, so the stored weights
// are int8 and the arithmetic is float on the dequantized weights. The activation observers of the QConfigs are not
// used.
#pragma once

#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "quant/qconfig_mapping.h"

namespace octet {

struct QuantizeWeightOnlyOptions {
  const Context* context = nullptr;  // runs the weight observers and quantization (nullptr: the default)
};

// Fails on a mapping that does not validate against the graph, or a weight that cannot be quantized (naming node
// and weight). `quantized` (optional) receives the names of the nodes whose weights were quantized. The result
// compiles with QuantizedGraphRegistry().
Result<Graph> QuantizeWeightOnly(const Graph& float_graph, const QConfigMapping& mapping,
                                 const QuantizeWeightOnlyOptions& options = {},
                                 std::vector<std::string>* quantized = nullptr);

}  // namespace octet
