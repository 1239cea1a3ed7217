// Histogram kernels for the avx512vnni tier (16 lanes; only AVX-512 F/BW instructions are used): xsimd_kernels.h's
// bodies for xsimd::avx512bw, with a fused multiply-add for the division-free quotient (xsimd 8.1 has none here).
// GCC 12 reports the _mm512_undefined_* placeholders inside its own AVX-512 intrinsics as uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "observers/kernels/xsimd_kernels.h"

namespace octet {
namespace {

// One rounding: xsimd 8.1's fma for avx512* multiplies and adds separately (see xsimd_kernels.h).
struct Avx512Fma {
  xsimd::batch<float, xsimd::avx512bw> operator()(const xsimd::batch<float, xsimd::avx512bw>& x,
                                                  const xsimd::batch<float, xsimd::avx512bw>& y,
                                                  const xsimd::batch<float, xsimd::avx512bw>& z) const {
    return _mm512_fmadd_ps(x, y, z);
  }
};

}  // namespace

void histogram_f32_linear_ukernel__avx512vnni(size_t n, const float* x, const LinearHistogramParams& params,
                                              uint32_t* counts) {
  xsimd_kernels::LinearHistogram<xsimd::avx512bw, false, Avx512Fma>(n, x, params, counts);
}

MinMaxResult histogram_f32_linear_minmax_ukernel__avx512vnni(size_t n, const float* x,
                                                            const LinearHistogramParams& params, uint32_t* counts) {
  return xsimd_kernels::LinearHistogram<xsimd::avx512bw, true, Avx512Fma>(n, x, params, counts);
}

void histogram_f32_signed_ukernel__avx512vnni(size_t n, const float* x, const SignedHistogramParams& params,
                                              uint32_t* counts) {
  xsimd_kernels::SignedHistogram<xsimd::avx512bw>(n, x, params, counts);
}

}  // namespace octet
