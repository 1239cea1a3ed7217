// Conv + BatchNormalization as PyTorch's QAT ConvBn2d (torch/ao/nn/intrinsic/qat/modules/conv_fused.py,
// _forward_approximate; reference/numerics.md 2.17), written as ordinary float nodes so that training
// differentiates it with the existing backward functions:
//   s = gamma / sqrt(running_var + eps)                      (per output channel; gradient reaches gamma)
//   y = conv(x, weight_fake_quant(W * s), no bias) / s + b    (b: the Conv's bias, 0 when absent)
//   z = BatchNormalization(y)                                 (training mode: batch statistics, running update)
// The weight fake-quant is not inserted here: the Conv's weight input becomes the value W * s, where PrepareQat
// puts it. Frozen statistics (freeze_bn_stats) are TrainingGraph::set_batch_norm_frozen; Convert folds the
// BatchNormalization with its running statistics (quant/fold_batch_norm.h), so in eval mode the unit computes
// exactly what the folded Conv does (up to float rounding).
//
// s = 0 (gamma = 0) divides by zero, as in PyTorch's approximate forward.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace octet::qat {

// One rewritten pair, with the names of what training updates.
struct ConvBnUnit {
  std::string conv;           // the Conv node (its name kept)
  std::string batch_norm;     // the BatchNormalization node (kept)
  std::string weight;         // W: a constant read by the scaling Mul, no longer by the Conv
  std::string bias;           // b, or "" (read by a Reshape feeding the bias Add)
  std::string scaled_weight;  // the value W * s, the Conv's weight input
};

// Rewrites every Conv whose output feeds only an inference-mode BatchNormalization (constant weight, bias,
// statistics of the Conv's output channels; the conditions of FoldBatchNorm) as above. Returns the units in graph
// order. The graph needs SortTopologically afterwards (new nodes are appended).
Result<std::vector<ConvBnUnit>> RewriteConvBnForQat(Graph& graph);

}  // namespace octet::qat
