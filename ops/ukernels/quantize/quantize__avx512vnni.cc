// AVX-512 quantize kernels (avx512vnni tier; only AVX-512 F/BW/DQ/VL instructions are used).
//
// 16 floats per vector, two vectors per iteration; the tail uses masked loads and stores (no over-read). With
// stream_stores and a 16-byte aligned output, full blocks use non-temporal stores followed by an sfence.
// u8 / s8: scale in float, clamp in float to [quant_min - zp, quant_max - zp] (integers, so clamping before
// rounding equals clamping after), NaN lanes zeroed, vcvtps2dq (round to nearest even under the default MXCSR),
// add zp, truncate with vpmovdb (values are already in range).
// s32: the clamp bounds are not exact in float, so the scaled value is widened to double (exact), rounded there,
// zp added (exact), clamped to [quant_min, quant_max] and converted (vcvtpd2dq of an integer inside int32).
#include <immintrin.h>

#include <cstdint>

#include "ops/ukernels/quantize.h"

namespace octet {
namespace {

// Scaled, clamped, NaN-zeroed value of 16 lanes selected by `mask`, and the NaN count.
inline __m512 ScaleClamp(__m512 x, __m512 inv_scale, __m512 lo, __m512 hi, size_t* nans) {
  __m512 v = _mm512_mul_ps(x, inv_scale);
  const __mmask16 is_nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  *nans += static_cast<size_t>(__builtin_popcount(is_nan));
  v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));  // NaN stays NaN (second operand), then is zeroed
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~is_nan), v);
}

template <typename T>
size_t Quantize8(size_t n, const float* x, T* y, const QuantizeParams& p) {
  const __m512 inv_scale = _mm512_set1_ps(p.inv_scale);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(p.quant_min - p.zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(p.quant_max - p.zero_point));
  const __m512i zp = _mm512_set1_epi32(p.zero_point);
  size_t nans = 0;
  size_t i = 0;
  const bool stream = p.stream_stores && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 v0 = ScaleClamp(_mm512_loadu_ps(x + i), inv_scale, lo, hi, &nans);
    const __m512 v1 = ScaleClamp(_mm512_loadu_ps(x + i + 16), inv_scale, lo, hi, &nans);
    const __m128i b0 = _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v0), zp));
    const __m128i b1 = _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v1), zp));
    if (stream) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(y + i), b0);
      _mm_stream_si128(reinterpret_cast<__m128i*>(y + i + 16), b1);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), b0);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i + 16), b1);
    }
  }
  if (stream) _mm_sfence();
  for (; i < n; i += 16) {
    const size_t left = n - i < 16 ? n - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << left) - 1u);
    const __m512 v = ScaleClamp(_mm512_maskz_loadu_ps(m, x + i), inv_scale, lo, hi, &nans);
    const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
    _mm512_mask_cvtepi32_storeu_epi8(y + i, m, q);
  }
  return nans;
}

}  // namespace

size_t quantize_f32_u8_ukernel__avx512vnni(size_t n, const float* x, uint8_t* y, const QuantizeParams& p) {
  return Quantize8(n, x, y, p);
}

size_t quantize_f32_s8_ukernel__avx512vnni(size_t n, const float* x, int8_t* y, const QuantizeParams& p) {
  return Quantize8(n, x, y, p);
}

size_t quantize_f32_s32_ukernel__avx512vnni(size_t n, const float* x, int32_t* y, const QuantizeParams& p) {
  const __m512 inv_scale = _mm512_set1_ps(p.inv_scale);
  const __m512d lo = _mm512_set1_pd(static_cast<double>(p.quant_min));
  const __m512d hi = _mm512_set1_pd(static_cast<double>(p.quant_max));
  const __m512d zp = _mm512_set1_pd(static_cast<double>(p.zero_point));
  // rne first, then + zp (exact in double), then clamp: the result is an integer inside int32.
  auto finish = [&](__m512d d) {
    d = _mm512_add_pd(_mm512_roundscale_pd(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
    return _mm512_cvtpd_epi32(_mm512_min_pd(hi, _mm512_max_pd(lo, d)));
  };
  size_t nans = 0;
  for (size_t i = 0; i < n; i += 16) {
    const size_t left = n - i < 16 ? n - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << left) - 1u);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), inv_scale);
    const __mmask16 is_nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    nans += static_cast<size_t>(__builtin_popcount(is_nan));
    const __m512 v_clean = _mm512_maskz_mov_ps(static_cast<__mmask16>(~is_nan), v);
    const __m512d d0 = _mm512_cvtps_pd(_mm512_castps512_ps256(v_clean));
    const __m512d d1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v_clean), 1)));
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(finish(d0)), finish(d1), 1);
    _mm512_mask_storeu_epi32(y + i, m, q);
  }
  return nans;
}

}  // namespace octet
