// Scalar specification of QBatchMatMul (ops/int8/int8_ops.h): MatMul of two int8 activations (attention's Q x K^T
// and P x V), numpy batch broadcasting over the leading dims, per-tensor qparams on A, B and Y, fp32
// requantization. Per batch b, with A_b [M, K] and B_b [K, N]:
//   W_b[j][k] = B_b[k][j] - 128 when B is u8 (zero point zb - 128), else B_b[k][j]   (s8 [N, K]: qgemm's weights)
//   acc[i][j] = sum_k (A_b[i][k] - za) * (W_b[j][k] - zw)                          (int32, qgemm_reference.h)
//   y[i][j]   = clamp(rne(f32(acc) * m) + zy, y_quant_min, y_quant_max), m = QGemmFp32Multiplier(sa, sb, sy)
// Shifting u8 codes by 128 keeps their real values (zero point shifted alike), so the u8 x u8 product runs on the
// u8 x s8 kernels; the accumulators are the same integers.
#pragma once

#include <cstdint>
#include <vector>

#include "core/qparams.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::reference {

// The batch layout of A [..., M, K] x B [..., K, N]: the output shape and, per
// output batch, the offsets (in elements) of its A and B matrices. Fails on
// rank < 2, a K mismatch or batch dims that do not broadcast.
struct BatchMatMulShape {
  Shape output;
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> a_offsets, b_offsets;
};
Result<BatchMatMulShape> MakeBatchMatMulShape(const Shape& a, const Shape& b);

// B's K x N matrix at `b` (u8 or s8 codes) as s8 [N, K] weights; returns the
// weights' zero point.
int32_t BatchMatMulWeights(DType b_dtype, const void* b, int64_t k, int64_t n, int32_t b_zero_point, int8_t* w);

// The whole operator.
Result<Tensor> QBatchMatMul(const Tensor& a, const QParams& a_qp, const Tensor& b, const QParams& b_qp,
                            const QParams& y_qp);

}  // namespace octet::reference
