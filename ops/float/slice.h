// Slice (opset 13, any dtype): starts, ends, axes and steps as constant inputs, clamped as ONNX specifies
// (negative indices count from the end, steps may be negative, never 0).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterSliceOps(OpRegistry& registry);

}  // namespace octet::float_ops
