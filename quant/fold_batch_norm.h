// FoldBatchNorm: folds an inference-mode BatchNormalization into the Conv or Gemm (torch.nn.Linear) that feeds it,
// with PyTorch's formulas (torch/nn/utils/fusion.py), in float32:
//   Conv:  r = rsqrt(var + eps);       W'[o] = W[o] * (gamma[o] * r[o]);  b' = (b - mean) * r * gamma + beta
//   Gemm:  s = gamma * rsqrt(var + eps); W'[o] = W[o] * s[o];             b' = (b - mean) * s + beta
// (b = 0 when the node has no bias; a bias constant "<node>.bias" is then added). The folded node keeps its name
// and takes over the BatchNormalization's output value; the BatchNormalization node is removed.
//
// A pair is folded only when the rewrite is exact in meaning: the BatchNormalization's statistics, the weight and
// the bias are constants; the Conv/Gemm output feeds nothing but the BatchNormalization and is no graph output;
// Gemm has alpha = beta = 1 and a 1-D bias of N values (or none). Other BatchNormalizations stay as they are.
// Weight and bias constants used by another node are copied, not changed.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace octet {

// Returns the names of the BatchNormalization nodes folded (in graph order).
Result<std::vector<std::string>> FoldBatchNorm(Graph& graph);

}  // namespace octet
