// QGemm / QMatMul's op-level reference: the operator's weight layouts onto the GEMM spec (see qgemm_op_reference.h).
#include "ops/reference/qgemm_op_reference.h"

#include <cstddef>
#include <vector>

#include "ops/reference/qgemm_reference.h"

namespace octet::reference {

template <typename TA>
void QGemmOpAccumulate(int64_t m, int64_t n, int64_t k, const TA* x, int32_t x_zp, const int8_t* w, bool w_rows,
                       const int32_t* w_zero_points, int32_t* acc) {
  std::vector<int8_t> rows(static_cast<size_t>(n * k));  // W as N x K
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) rows[static_cast<size_t>(j * k + p)] = w_rows ? w[j * k + p] : w[p * n + j];
  QGemmAccumulate<TA>(static_cast<size_t>(m), static_cast<size_t>(n), static_cast<size_t>(k), x, static_cast<size_t>(k),
                      x_zp, rows.data(), static_cast<size_t>(k), w_zero_points, acc, static_cast<size_t>(n));
}

template void QGemmOpAccumulate<uint8_t>(int64_t, int64_t, int64_t, const uint8_t*, int32_t, const int8_t*, bool,
                                         const int32_t*, int32_t*);
template void QGemmOpAccumulate<int8_t>(int64_t, int64_t, int64_t, const int8_t*, int32_t, const int8_t*, bool,
                                        const int32_t*, int32_t*);

}  // namespace octet::reference
