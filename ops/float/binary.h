// Element-wise binary operators with numpy broadcasting: Add, Sub, Mul, Div (f32 and s32), Pow (f32).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// Integer Div truncates toward zero (ONNX Runtime's behaviour); a zero divisor is a run-time error.
Status RegisterBinaryOps(OpRegistry& registry);

}  // namespace octet::float_ops
