// QGemm and QMatMul of quantized graphs (domain "octet", ops/int8/int8_ops.h): ONNX Gemm and MatMul on int8 values
// with constant s8 weights, prepacked once at Prepare (ops/qgemm.h).
//
//   QGemm(x u8|s8 [M, K], w s8, [b]) -> y u8|s8 [M, N]   ONNX Gemm with transA = 0, alpha = beta = 1: w [N, K] with
//       transB = 1 (per channel on axis 0) or [K, N] with transB = 0 (per channel on axis 1); b a constant [N]
//       (int8_ops::ReadLinearOutput).
//   QMatMul(x u8|s8 [..., K], w s8 [K, N]) -> y u8|s8 [..., N]   w per tensor or per channel on axis 1; no bias.
//   y[..., j] = stage(sum_k (x[..., k] - x_zp) * (w_j[k] - w_zp[j])) (reference::QGemmAccumulate then
//   reference::QGemmApplyStage); attributes requantization and activation as every linear int8 operator.
// Run feeds the input rows straight to QGemmPlan::RunRows (no copy, no scratch).
#pragma once

#include "core/op_registry.h"
#include "core/status.h"

namespace octet::int8_ops {

Status RegisterQGemmOps(OpRegistry& registry);

}  // namespace octet::int8_ops
