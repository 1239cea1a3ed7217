// Element-indexed gathers and scatters: GatherElements, ScatterElements (reduction none, add, mul, max, min),
// GatherND (batch_dims) and ScatterND (same reductions), for data of any dtype octet holds and s32 indices (ONNX
// int64); negative indices count from the end. An index out of range is a run-time error naming it.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// With reduction "none", duplicate indices leave the last update (ONNX leaves the order undefined).
Status RegisterGatherScatterOps(OpRegistry& registry);

}  // namespace octet::float_ops
