// Min/max kernel for AVX2 (8 lanes): xsimd_kernels.h's MinMax for xsimd::fma3<xsimd::avx2>, 4 vectors per step.
#include "observers/kernels/xsimd_kernels.h"

namespace octet {

MinMaxResult minmax_f32_ukernel__avx2(size_t n, const float* x) {
  return xsimd_kernels::MinMax<xsimd::fma3<xsimd::avx2>>(n, x);
}

}  // namespace octet
