// QConcat (ops/int8/int8_ops.h): ONNX Concat of u8 / s8 inputs along `axis` into y's qparams. An input whose qparams
// equal y's is copied; any other is requantized code by code,
//   y = clamp(rne(f32(x - x_zp) * f32(x_scale / y_scale)) + y_zp, y_quant_min, y_quant_max)
// (reference::RequantizeFp32Value of x - x_zp), through a 256-entry table built at Prepare.
#pragma once

#include "core/op_registry.h"

namespace octet::int8_ops {

Status RegisterQConcatOp(OpRegistry& registry);

}  // namespace octet::int8_ops
