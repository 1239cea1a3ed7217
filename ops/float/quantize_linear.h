// ONNX's linear quantization operators on run-time scales and zero points (default domain, opsets 10 to 21):
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear. Quantized graphs of octet's own use Quantize /
// Dequantize (ops/int8/quantize_ops.h) with qparams fixed on their values; these are the ops as ONNX models write
// them, where the scale and zero point are tensors (often graph inputs), so they are read at every run.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// QuantizeLinear(x f32, y_scale f32, [y_zero_point u8|s8]) -> y u8|s8:
//   y = saturate(rne(x / y_scale) + y_zero_point), the division in float32, NaN giving the zero point.
//   Per tensor (scale of one element) or per axis (`axis`, default 1: a 1-D scale of dim(axis) elements, the zero
//   point of the same shape). Without a zero point, y is u8 (opset 21's output_dtype may ask for s8).
// DequantizeLinear(x u8|s8|s32, x_scale f32, [x_zero_point]) -> y f32: y = (f32(x) - f32(zp)) * scale, same axis
//   rules; an s32 input needs zero point 0 (ONNX's rule for int32 biases).
// DynamicQuantizeLinear(x f32) -> y u8, y_scale f32 scalar, y_zero_point u8 scalar, ONNX's formula:
//   scale = (max(0, max x) - min(0, min x)) / 255, zp = saturate(rne(0 - min / scale)), y as QuantizeLinear.
//   All-zero (or empty) input: scale 0 would divide by zero, so ONNX Runtime's choice of scale 1 (zp 0) is used.
// Opset 21's blocked quantization (block_size > 0) is refused.
Status RegisterQuantizeLinearOps(OpRegistry& registry);

}  // namespace octet::float_ops
