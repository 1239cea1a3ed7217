// The warning a quantization flow gives when it converted none of the operators
// it exists for (a model that comes out float while the command reports
// success): each candidate node is named with why it stayed float.
#pragma once

#include <string>

#include "core/graph.h"
#include "quant/convert.h"
#include "quant/dynamic.h"

namespace octet {

// Static: no Conv, Gemm or MatMul of `prepared_graph` (the graph Convert read)
// was quantized although some exist. Empty when there is nothing to warn about.
std::string NothingQuantizedWarning(const Graph &prepared_graph, const ConvertReport &report);
// Dynamic: no Gemm, MatMul, LSTM or GRU was converted although some had a
// dynamic QConfig.
std::string NothingQuantizedWarning(const QuantizeDynamicReport &report);

}  // namespace octet
