// AVX-512 softmax-row kernel (avx512vnni tier; uses AVX-512F only): 16 lanes
// (ops/float/ukernels/softmax_row/softmax_row_simd.h). GCC 12 reports the _mm512_undefined_* placeholders inside its
// own intrinsics, inlined into xsimd's exp, as uninitialized (as for the erf kernel).
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "ops/float/ukernels/softmax_row/softmax_row_simd.h"

namespace octet::float_ops {

void softmax_row_f32_ukernel__avx512vnni(const float* x, float* y, int64_t n) {
  softmax_row_simd::Row<xsimd::avx512f>(x, y, n);
}

}  // namespace octet::float_ops
