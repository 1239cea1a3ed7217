// Scalar specification of QBatchMatMul (ops/int8/int8_ops.h): MatMul of two int8 activations (attention's Q x K^T
// and P x V), numpy batch broadcasting over the leading dims, per-tensor qparams on A, B and Y, fp32
// requantization. Per batch b, with A_b [M, K] and B_b [K, N]:
//   W_b[j][k] = clamp(B_b[k][j] - s, -128, 127), zw = zb - s       (s8 [N, K]: qgemm's weights)
//               s = qmin + 64 when B's quant range [qmin, qmax] spans at most 128 codes (W in [-64, 63]), else 128
//               for u8 and 0 for s8 (BatchMatMulWeightShift)
//   acc[i][j] = sum_k (A_b[i][k] - za) * (W_b[j][k] - zw)          (int32, qgemm_reference.h)
//   y[i][j]   = clamp(rne(f32(acc) * m) + zy, y_quant_min, y_quant_max), m = QGemmFp32Multiplier(sa, sb, sy)
// Shifting codes and zero point alike keeps their real values and the accumulators' integers, so u8 x u8 runs on
// the u8 x s8 kernels; weights within [-64, 63] (7-bit B, as --backend x86 gives) let the vpmaddubsw kernels run
// for any activations, with one packing. Codes outside B's quant range (no producer writes them) are clamped.
#pragma once

#include <cstdint>
#include <vector>

#include "core/qparams.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::reference {

// The batch layout of A [..., M, K] x B [..., K, N]: the output shape and, per output batch, the offsets (in elements)
// of its A and B matrices. Fails on rank < 2, a K mismatch or batch dims that do not broadcast.
struct BatchMatMulShape {
  Shape output;
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> a_offsets, b_offsets;
};
Result<BatchMatMulShape> MakeBatchMatMulShape(const Shape& a, const Shape& b);

// s above, from B's dtype and quant range.
int32_t BatchMatMulWeightShift(DType b_dtype, int64_t quant_min, int64_t quant_max);
// B's K x N matrix at `b` (u8 or s8 codes) as s8 [N, K] weights, codes shifted by `shift`.
void BatchMatMulWeights(DType b_dtype, const void* b, int64_t k, int64_t n, int32_t shift, int8_t* w);

// The whole operator.
Result<Tensor> QBatchMatMul(const Tensor& a, const QParams& a_qp, const Tensor& b, const QParams& b_qp,
                            const QParams& y_qp);

}  // namespace octet::reference
