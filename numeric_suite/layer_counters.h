// Per-layer counters of an int8 node call: how many outputs requantization clipped, and how close the int32
// accumulators of QConv / QGemm / QMatMul came to overflowing.
#pragma once

#include <cstdint>
#include <optional>

#include "core/executor.h"
#include "core/graph.h"
#include "core/status.h"

namespace octet {

struct ClipCount {
  int64_t clipped = 0;  // outputs equal to the output qparams' quant_min or quant_max
  int64_t total = 0;
};

// Counts the u8/s8 outputs of `call` (slot 0) at quant_min or quant_max of the output value's qparams in `graph`
// (only quant_max for a fused ReLU, whose lower clamp is the activation, not saturation). std::nullopt for operators
// that do not requantize (QMaxPool, QClamp, shape operators) and outputs that are not u8/s8 with qparams (dynamic
// operators produce f32).
std::optional<ClipCount> CountClipped(const Graph& graph, const NodeCall& call);

// max |acc| over the int32 accumulators acc = sum (x - x_zp)(w - w_zp) of a QConv, QGemm or QMatMul call (no bias),
// recomputed with the scalar reference kernels (ops/reference) on the call's int8 input and weight; std::nullopt
// for other operators. Fails on attributes the reference cannot express, naming the node.
Result<std::optional<int64_t>> MaxAbsAccumulator(const Graph& graph, const NodeCall& call);

// log2(2^31 / max_abs_acc): the bits left before int32 overflows; 31 for an all-zero accumulator.
double AccumulatorHeadroomBits(int64_t max_abs_acc);

}  // namespace octet
