// Scalar specification of per-token dynamic quantization (issue 17; torchao's Int8DynamicActivationInt8Weight,
// XNNPACK's qd8 kernels): every row of the activations (one token) gets its own u8 qparams, chosen per call from
// that row's live range, so one outlier token no longer coarsens the grid of all the others. The dynamic operators
// with attribute per_token = 1 (ops/int8/dynamic_gemm_op.h) equal this composition bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops/reference/dynamic_qgemm_reference.h"

namespace octet::reference {

// Per-token dynamic GEMM: for every row i of x,
//   q_i     = ChooseDynamicActivationQParams(k, row i of x, reduce_range)                  (dynamic_qgemm_reference.h)
//   a[i][p] = QuantizeValue<uint8_t>(x[i][p], 1.0f / q_i.scale, q_i.zero_point, 0, q_i.quant_max)
//   acc     = sum_p (a[i][p] - q_i.zero_point) * (w[j][p] - w_zero_points[j])           (exact int32)
//   y[i][j] = DequantizeAccumulatorValue(acc, q_i.scale, w_scales[j], bias ? bias[j] : 0)   (the kF32 stage)
// Shapes and strides as DynamicQGemm's. Returns the m chosen row qparams.
std::vector<DynamicActivationQParams> PerTokenDynamicQGemm(size_t m, size_t n, size_t k, const float* x,
                                                           size_t x_stride, const int8_t* w, size_t w_stride,
                                                           const float* w_scales, const int32_t* w_zero_points,
                                                           const float* bias, bool reduce_range, float* y,
                                                           size_t y_stride);

}  // namespace octet::reference
