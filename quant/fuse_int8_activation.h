// A pass over converted int8 graphs: each QClamp (a Relu or Clip that Convert could not fuse in the float graph,
// ReLU6 above all) folded into the int8 operator that produces its input, as that operator's fused activation.
#pragma once

#include "core/graph.h"
#include "core/status.h"

namespace octet {

// Rewrites `graph`, a graph of int8 operators (ops/int8/int8_ops.h), in place. A QClamp is fused when its input
//   * is produced by a QConv, QGemm, QMatMul, QAdd or QMul (domain "octet"),
//   * is used by that QClamp alone (not a graph output, no other consumer), and
//   * has the same qparams as the QClamp's output (as QClamp requires);
// and when the producer's fused activation and the clamp, both as real intervals, intersect. The producer then
// writes the QClamp's output (name and qparams unchanged) with the intersection as its activation: "Relu" for
// [0, +Inf), "" for (-Inf, +Inf), else "Clip" with activation_min / activation_max; the QClamp node is removed and
// the intermediate value is left unused. Chains of clamps fold one after the other.
//
// Exact: the producer's requantize epilogue already clamps to [lo, hi] and clamp(clamp(v, a, b), c, d) =
// clamp(v, max(a, c), min(b, d)) while max(a, c) <= min(b, d); the codes of real bounds are monotonic
// (reference::ClampBoundCode), so the fused graph gives the same integers as the unfused one, bit for bit.
// Returns how many QClamp nodes were fused.
Result<int> FuseInt8Activations(Graph& graph);

}  // namespace octet
