// AVX2 + FMA softmax-row kernel: 8 lanes (ops/float/ukernels/softmax_row/softmax_row_simd.h).
#include "ops/float/ukernels/softmax_row/softmax_row_simd.h"

namespace octet::float_ops {

void softmax_row_f32_ukernel__avx2(const float* x, float* y, int64_t n) {
  softmax_row_simd::Row<xsimd::fma3<xsimd::avx2>>(x, y, n);
}

}  // namespace octet::float_ops
