// Histogram kernels for AVX2 + FMA (8 lanes): xsimd_kernels.h's bodies for xsimd::fma3<xsimd::avx2>.
#include "observers/kernels/xsimd_kernels.h"

namespace octet {

void histogram_f32_linear_ukernel__avx2(size_t n, const float* x, const LinearHistogramParams& params,
                                        uint32_t* counts) {
  xsimd_kernels::LinearHistogram<xsimd::fma3<xsimd::avx2>, false>(n, x, params, counts);
}

MinMaxResult histogram_f32_linear_minmax_ukernel__avx2(size_t n, const float* x, const LinearHistogramParams& params,
                                                      uint32_t* counts) {
  return xsimd_kernels::LinearHistogram<xsimd::fma3<xsimd::avx2>, true>(n, x, params, counts);
}

void histogram_f32_signed_ukernel__avx2(size_t n, const float* x, const SignedHistogramParams& params,
                                        uint32_t* counts) {
  xsimd_kernels::SignedHistogram<xsimd::fma3<xsimd::avx2>>(n, x, params, counts);
}

}  // namespace octet
