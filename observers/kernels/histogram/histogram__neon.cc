// Histogram kernels for NEON (4 lanes): xsimd_kernels.h's bodies instantiated for xsimd::neon64.
#include "observers/kernels/xsimd_kernels.h"

namespace octet {

void histogram_f32_linear_ukernel__neon(size_t n, const float* x, const LinearHistogramParams& params,
                                        uint32_t* counts) {
  xsimd_kernels::LinearHistogram<xsimd::neon64, false>(n, x, params, counts);
}

MinMaxResult histogram_f32_linear_minmax_ukernel__neon(size_t n, const float* x, const LinearHistogramParams& params,
                                                      uint32_t* counts) {
  return xsimd_kernels::LinearHistogram<xsimd::neon64, true>(n, x, params, counts);
}

void histogram_f32_signed_ukernel__neon(size_t n, const float* x, const SignedHistogramParams& params,
                                        uint32_t* counts) {
  xsimd_kernels::SignedHistogram<xsimd::neon64>(n, x, params, counts);
}

}  // namespace octet
