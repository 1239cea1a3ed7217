// The NHWC layout pass of quantized graphs: keeps activations NHWC between consecutive int8 operators that can take
// them so, instead of each QConv transposing its input to NHWC and its output back to NCHW.
//
// Values keep their logical NCHW shapes (shape inference, arena sizes and every error message are unchanged); the
// pass records the physical layout on the nodes as int attributes:
//   QConv (2-D)                            nhwc_input, nhwc_output: X resp. Y is stored [N, H, W, C]
//   QAdd                                   nhwc: A, B and C are all stored [N, H, W, C] (broadcasting over the
//                                          permuted shapes)
//   QMaxPool (2-D)                         nhwc: X and Y are stored [N, H, W, C]
//   QGlobalAveragePool, QGlobalMaxPool     nhwc_input: X is stored [N, H, W, C] (Y [N, C, 1, 1] is the same bytes
//                                          in either layout)
// A value is NHWC only when its producer is a 2-D QConv or such a QAdd or QMaxPool, every consumer reads it NHWC and it
// is not a graph output, so the transposes happen only at the int8 region's boundaries (Quantize/Dequantize, Reshape,
// Flatten, QAveragePool, ...) and graph outputs are byte-identical to the graph without the pass. The integers computed
// are the same: only where they are stored changes.
//
// Hooks (RunOptions) see the stored bytes, so callers that inspect int8 activations through hooks (the numeric
// suite, loggers) must compile the graph without this pass; the octet command applies it to `run` and `bench model`.
#pragma once

#include "core/graph.h"

namespace octet::int8_ops {

// The attribute names above.
inline constexpr char kNhwcInputAttribute[] = "nhwc_input";
inline constexpr char kNhwcOutputAttribute[] = "nhwc_output";
inline constexpr char kNhwcAttribute[] = "nhwc";

// A copy of `graph` with the layout attributes set (and any stale ones removed); graphs without int8 convolutions
// come back unchanged. Returns how many values are stored NHWC through `nhwc_values` when non-null.
Graph PlanNhwcLayout(const Graph& graph, int* nhwc_values = nullptr);

}  // namespace octet::int8_ops
