// Op-level specification of QGemm and QMatMul (ops/int8/qgemm_op.h) on top of the GEMM spec (qgemm_reference.h):
// the weight in the operator's layout (QGemm with transB = 1: [N, K]; QMatMul and QGemm with transB = 0: [K, N])
// read as N rows of K, one per output channel. The test vectors' replay and the numeric suite's accumulator
// counters call it.
#pragma once

#include <cstdint>

namespace octet::reference {

// acc[i][j] (m x n, row-major) = sum_p (x[i][p] - x_zp) * (w_j[p] - w_zero_points[j]), x [m, k] row-major, w_j the
// j-th output channel of w: w[j][p] when w_rows ([N, K]), else w[p][j] ([K, N]). reference::QGemmAccumulate on the
// N x K rows. TA is uint8_t or int8_t.
template <typename TA>
void QGemmOpAccumulate(int64_t m, int64_t n, int64_t k, const TA* x, int32_t x_zp, const int8_t* w, bool w_rows,
                       const int32_t* w_zero_points, int32_t* acc);

}  // namespace octet::reference
