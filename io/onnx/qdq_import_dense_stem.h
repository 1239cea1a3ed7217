// The QDQ import's dense-stem rule (io/onnx/dense_stem.h): folds octet's one-Gemm form of a one-input-channel Conv
// back into the QConv it was exported from, so that octet export -> import gives the same int8 graph.
#pragma once

#include "core/graph.h"
#include "core/status.h"

namespace octet {

// In a graph RecognizeQdqGroups has rewritten, every
//   x -> Reshape [-1, H*W] -> QGemm (named by DenseStemName, transB = 1) -> Reshape [-1, OH, OW, O]
//   -> Transpose (0, 3, 1, 2) -> y
// whose dense weight, weight qparams and bias are exactly a Conv's dense form (tiled per output pixel, zero points
// 0) becomes QConv(x) -> y with the Conv's weight [O, 1, KH, KW], qparams and bias per channel, under the Conv's name;
// the weight and bias keep their value names. A Gemm without the mark, or one whose weight is not that form, stays
// as it is (correct, slower). Returns the number folded; the graph stays verified and sorted.
Result<int> FoldDenseStems(Graph& graph);

// Before the groups are made (octet Quantize / Dequantize in place of QuantizeLinear / DequantizeLinear, the rest
// still ONNX operators): where codes written by a Quantize reach, through shape-only ops and a Dequantize, a MaxPool
// that alone reads them, and the pooled codes' Quantize has the same scale and zero point with a narrower quant range
// (octet's export moves the x86 / fbgemm presets' 7-bit Clip after the MaxPool), the codes take that narrower range
// back, as octet's int8 graph had it. Exact: an integer clamp and max commute, and nothing else reads those codes.
void NarrowCodesBeforeMaxPools(Graph& graph);

}  // namespace octet
