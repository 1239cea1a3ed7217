// Which values of a float graph carry float data at run time, decided before
// any shape is known (Prepare has none): shape-building subgraphs (Shape,
// Gather, Concat, Reshape, Unsqueeze on int64 indices) are integers, and a node
// whose inputs are all constants is evaluated once at Compile (the executor
// folds it), so no calibration hook ever sees it. Neither is observed nor
// quantized; such a node stays float.
#pragma once

#include <vector>

#include "core/dtype.h"
#include "core/graph.h"

namespace octet {

// The dtype of every value by ONNX's typing rules, without shapes: graph inputs
// and constants as declared; Shape, Size, ArgMax/ArgMin, NonZero and TopK's
// indices are integers (octet holds int64 as s32); comparisons give bool (u8);
// Cast and ConstantOfShape read their attributes; Where follows input 1; every
// other node gives the dtype of its first input (f32 when it has none). Unknown
// casts count as integers.
std::vector<DType> InferValueDTypes(const Graph &graph);

// Per value: true when it is f32 and either a constant or computed from at
// least one graph input (not folded).
std::vector<bool> RuntimeFloatValues(const Graph &graph);

}  // namespace octet
