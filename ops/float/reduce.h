// Reductions on f32: ReduceMean (axes attribute, opsets 13-17), ReduceSum (axes input, opset 13+), ReduceMax and
// ReduceMin (axes attribute); keepdims (default 1); ReduceSum's noop_with_empty_axes. Sums accumulate in double.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterReduceOps(OpRegistry& registry);

}  // namespace octet::float_ops
