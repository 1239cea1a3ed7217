// AVX2 + FMA erf kernel: 8 lanes (ops/float/ukernels/erf/erf_simd.h).
#include "ops/float/ukernels/erf/erf_simd.h"

namespace octet::float_ops {

void erf_f32_ukernel__avx2(const float* x, float* y, int64_t n) { erf_simd::Span<xsimd::fma3<xsimd::avx2>>(x, y, n); }

}  // namespace octet::float_ops
