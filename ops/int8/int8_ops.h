// The operators of quantized graphs: the contract between Convert / QuantizeDynamic (quant/), the .octet format
// (io/), the numeric suite and the kernels. Every operator here is in domain "octet" (kInt8Domain).
//
// Values. Every u8/s8 value of a quantized graph carries qparams (Value::qparams): activations per tensor, weights
// per tensor or per channel. Operators read their inputs' qparams from ValueInfo::qparams and their outputs' from
// OpPrepareArgs::output_qparams, and fail at Prepare, naming the value, when one is missing or unsupported. An s32
// bias constant carries per-channel (or per-tensor) qparams of scale a_scale * w_scale[c] and zero point 0; a float
// bias (pytorch-fbgemm profile) has none.
//
// Attributes shared by the int8 operators:
//   requantization  "fp32" (default) | "q31" | "fbgemm": the output stage (DESIGN.md §4, reference::QGemmStage).
//   activation      "" (default) | "Relu": a fused ReLU, applied as the clamp's lower bound (the output zero point)
//                   | "Clip": a fused clamp to the real bounds activation_min / activation_max (floats, each
//                   optional), as QClamp quantizes them (reference::FusedActivationBounds). Convert fuses a QClamp
//                   into the QConv / QGemm / QMatMul / QAdd / QMul that feeds it (quant/fuse_int8_activation.h).
//
// Operators (inputs in brackets are optional; "q" = u8 or s8 with per-tensor qparams):
//   Quantize(x f32) -> y q                 y's qparams (per tensor or per channel; y may also be s32). rounding
//                                          "half_even" (default: zp + rne(x * f32(1 / s))) | "half_away" (tflite's
//                                          zp + round_half_away(x / s)); non_finite "error" (default: NaN fails the
//                                          Run naming the value, ±Inf saturate) | "quant_min" (PyTorch 1.13: NaN and
//                                          x / s >= 2^63, +Inf included, give quant_min). ops/int8/quantize_ops.h.
//   Dequantize(x u8|s8|s32) -> y f32       x's qparams. On a constant weight it is folded at Compile: weight-only
//                                          graphs are s8 weights + Dequantize + the float operator.
//   Requantize(x q) -> y q                 to y's qparams (when producer and consumer qparams differ); both per
//                                          tensor; fp32 scheme: clamp(rne(f32(x - x_zp) * f32(x_s * f32(1 / y_s))) +
//                                          y_zp, y quant_min, y quant_max).
//   QConv(x q, w s8, [b s32|f32]) -> y q   ONNX Conv attributes (1-D or 2-D, asymmetric pads and auto_pad allowed);
//                                          w a constant [M, C/group, kh, kw], per tensor or per channel (axis 0),
//                                          symmetric or affine; group == C == M with symmetric weights runs the
//                                          depthwise kernels. ops/int8/qconv_op.h.
//   QGemm(x q [M,K], w s8, [b]) -> y q     ONNX Gemm with transA = 0, alpha = beta = 1; w [N,K] (transB = 1, per
//                                          channel axis 0) or [K,N] (transB = 0, axis 1); b [N]. ops/int8/qgemm_op.h.
//   QMatMul(x q [...,K], w s8 [K,N]) -> y q  weight per tensor or per channel along axis 1; no bias.
//   Bias of QConv / QGemm: a constant, one value per output channel: s32 with the qparams above (fp32, q31), or
//   f32 without qparams (fbgemm adds it in float; fp32 and q31 quantize it at Prepare with rne(b / f32(x_s * w_s[c]))).
//   An s32 bias with requantization "fbgemm" is refused.
//   QAdd(a q, b q) -> y q, QMul(a q, b q) -> y q   numpy broadcasting; activation allowed.
//   QMaxPool(x q) -> y q, QAveragePool, QGlobalAveragePool, QGlobalMaxPool   ONNX attributes; max pools need y's
//                                          qparams equal x's (shared qparams).
//   QConcat(x q...) -> y q                 ONNX axis; inputs whose qparams differ from y's are requantized.
//   QLookup(x q) -> y q                    256-entry table from x's to y's qparams through `function` ("HardSwish",
//                                          "Sigmoid", "Tanh", "HardSigmoid", "LeakyRelu", "Gelu"; float attributes as
//                                          ONNX; Gelu's approximate "none" | "tanh").
//   QClamp(x q) -> y q                     y's qparams equal x's; float attributes min, max (real values; Relu is
//                                          min = 0, Clip its bounds).
//   DynamicQGemm(x f32, w s8, [b f32]) -> y f32, DynamicQMatMul(x f32, w s8) -> y f32: x quantized per call from
//                                          its live range (ChooseQuantizationParams), attribute reduce_range (0|1);
//                                          per_token = 1: one range, scale and zero point per row of x.
//   DynamicQLSTM, DynamicQGRU              ONNX LSTM / GRU inputs with W and R as s8 per-channel constants.
//   QLayerNorm(x q, Scale f32, [B f32]) -> y q, QSoftmax(x q) -> y q   over the last axis (ops/int8/qrow_ops.h).
//   QBatchMatMul(a q, b q) -> y q          MatMul of two activations, fp32 requantization (ops/int8/qbatchmatmul_op.h).
// Shape-only ONNX operators (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Identity) run on u8/s8 unchanged, in
// the default domain; their output carries its input's qparams.
#pragma once

#include <utility>

#include "core/op_registry.h"
#include "core/op_table.h"
#include "core/status.h"

namespace octet {

// Registers every int8 operator above into `registry` (domain kInt8Domain, names from core/op_table.h).
Status RegisterInt8Ops(OpRegistry& registry);

// Registers `prepare` as int8 operator `op`: the op files name their operators by id, never by string.
inline Status RegisterInt8Op(OpRegistry& registry, Int8Op op, OpPrepareFn prepare) {
  return registry.Register(kInt8Domain, Int8OpName(op), std::move(prepare));
}

}  // namespace octet
