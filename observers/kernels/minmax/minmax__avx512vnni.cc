// Min/max kernel for the avx512vnni tier (16 lanes; only AVX-512 F/BW instructions are used): xsimd_kernels.h's
// MinMax for xsimd::avx512bw, 4 vectors per step.
// GCC 12 reports the _mm512_undefined_* placeholders inside its own AVX-512 intrinsics as uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "observers/kernels/xsimd_kernels.h"

namespace octet {

MinMaxResult minmax_f32_ukernel__avx512vnni(size_t n, const float* x) {
  return xsimd_kernels::MinMax<xsimd::avx512bw>(n, x);
}

}  // namespace octet
