// AVX-512 erf kernel (avx512vnni tier; uses AVX-512F only): 16 lanes (ops/float/ukernels/erf/erf_simd.h).
// GCC 12 reports the _mm512_undefined_* placeholders inside its own intrinsics, inlined into xsimd's erf, as
// uninitialized (the ISA's object library already silences the maybe-uninitialized form).
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "ops/float/ukernels/erf/erf_simd.h"

namespace octet::float_ops {

void erf_f32_ukernel__avx512vnni(const float* x, float* y, int64_t n) { erf_simd::Span<xsimd::avx512f>(x, y, n); }

}  // namespace octet::float_ops
