// Quantize, Dequantize and Requantize of quantized graphs (domain "octet", ops/int8/int8_ops.h): the boundaries
// between float and int8 values, and the change of qparams between two int8 values.
//
//   Quantize(x f32) -> y u8|s8|s32   to y's qparams (per tensor or per channel on their axis). Attributes:
//     rounding   "half_even" (default): q = clamp(zp + rne(x * f32(1 / scale)), quant_min, quant_max), PyTorch's
//                order (ops/quantize.h, reference::QuantizeValue);
//                "half_away": q = clamp(zp + round_half_away(x / scale), ...), TFLite's reference Quantize
//                (reference::QuantizeValueHalfAway).
//     non_finite "error" (default): a NaN input fails the Run, naming the value and the first NaN's index; ±Inf and
//                values beyond the range saturate (DESIGN.md §4's strict mode);
//                "quant_min": PyTorch 1.13's mapping: NaN and scaled values >= 2^63 (+Inf included) give
//                quant_min, -Inf saturates to quant_min too; everything else as with "error"
//                (reference::PyTorchMapsToQuantMin).
//   Dequantize(x u8|s8|s32) -> y f32  y = f32(q - zp) * scale with x's qparams (per tensor or per channel). Folded at
//                                    Compile when x is a constant (weight-only graphs).
//   Requantize(x u8|s8) -> y u8|s8   to y's qparams, both per tensor, in the fp32 scheme:
//                                    y = clamp(rne(f32(x - x_zp) * m) + y_zp, y quant_min, y quant_max),
//                                    m = f32(x_scale * f32(1 / y_scale)) (reference::RequantizeQ8Value), run as a
//                                    256-entry table built from the reference at Prepare.
#pragma once

#include "core/op_registry.h"
#include "core/status.h"

namespace octet::int8_ops {

Status RegisterQuantizeOps(OpRegistry& registry);

}  // namespace octet::int8_ops
