// ONNX's integer convolution and matrix product operators (default domain, opset 10 on): ConvInteger,
// MatMulInteger (int32 accumulators) and QLinearConv, QLinearMatMul (requantized 8-bit outputs), with run-time
// scales and zero points. The accumulators are the op-level references of octet's int8 ops
// (ops/reference/qconv_op_reference.h, qgemm_reference.h), u8 weights shifted to s8 with their zero point (w - zp is
// unchanged); the requantization is the fp32 scheme of QGemm (reference::RequantizeFp32Value with multiplier
// f32(f32(x_scale * w_scale) * f32(1 / y_scale))), as ONNX Runtime's MLAS computes it. Models whose weights and
// qparams are constants are rewritten into QConv / QGemm on octet's kernels at import (io/onnx/qdq_import.h); these
// ops run the rest.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// ConvInteger(x u8|s8, w u8|s8, [x_zero_point], [w_zero_point]) -> y s32: 1-D and 2-D convolutions (Conv's
//   attributes), w's zero point per tensor or per output channel.
// MatMulInteger(A u8|s8, B u8|s8, [a_zero_point], [b_zero_point]) -> Y s32: numpy matmul with batch broadcasting;
//   a_zero_point per tensor or per row of A (1-D of M), b_zero_point per tensor or per column of B (1-D of N).
// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B s32]) -> y of y_zp's dtype: w_scale and w_zp
//   per tensor or per output channel.
// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) -> y of y_zp's dtype: b's qparams per tensor or
//   per column.
// Accumulators that could leave int32 (K above 33,025 taps) are refused at compile time.
Status RegisterIntegerLinearOps(OpRegistry& registry);

}  // namespace octet::float_ops
