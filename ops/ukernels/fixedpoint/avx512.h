// The q31 fixed-point primitives on AVX-512 (F/BW/DQ/VL only), 16 int32 lanes per zmm, for every kernel built with
// AVX-512 (qgemm including AMX's output stage, qdwconv, requantize). Bit for bit ops/reference/fixed_point.h; the
// same arithmetic as avx2.h with mask registers in place of blends. Internal linkage, as in avx2.h.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace octet {
namespace {
namespace avx512 {

// floor((a*b + 2^30) / 2^31) from vpmuldq on even and odd lanes. Requires b >= 0 in every lane.
inline __m512i SaturatingRoundingDoublingHighMul(__m512i a, __m512i b) {
  const __m512i half = _mm512_set1_epi64(int64_t{1} << 30);
  const __m512i even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(a, b), half), 31);
  const __m512i odd = _mm512_slli_epi64(
      _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(b, 32)), half), 1);
  return _mm512_mask_blend_epi32(0xAAAA, even, odd);
}

inline __m512i SaturatingShiftLeft(__m512i x, __m512i left) {
  const __m512i shifted = _mm512_sllv_epi32(x, left);
  const __mmask16 overflow = _mm512_cmpneq_epi32_mask(_mm512_srav_epi32(shifted, left), x);
  const __mmask16 negative = _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512());
  const __m512i saturated =
      _mm512_mask_blend_epi32(negative, _mm512_set1_epi32(INT32_MAX), _mm512_set1_epi32(INT32_MIN));
  return _mm512_mask_blend_epi32(overflow, shifted, saturated);
}

// The reference's remainder/threshold rule (ties away from zero), exponent in [0, 31].
inline __m512i RoundingDivideByPOT(__m512i x, __m512i exponent) {
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, exponent), one);
  const __m512i remainder = _mm512_and_si512(x, mask);
  __m512i threshold = _mm512_srli_epi32(mask, 1);
  threshold = _mm512_mask_add_epi32(threshold, _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512()), threshold, one);
  const __m512i shifted = _mm512_srav_epi32(x, exponent);
  return _mm512_mask_add_epi32(shifted, _mm512_cmpgt_epi32_mask(remainder, threshold), shifted, one);
}

// A QuantizeMultiplier shift split once per group of channels, outside the row loop.
struct Q31Shift {
  __m512i left;   // max(shift, 0)
  __m512i right;  // max(-shift, 0), the RoundingDivideByPOT exponent
};

inline Q31Shift SplitShift(__m512i shift) {
  const __m512i zero = _mm512_setzero_si512();
  return {_mm512_max_epi32(shift, zero), _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero)};
}

// The reference's MultiplyByQuantizedMultiplier, multiplier in [0, 2^31 - 1].
inline __m512i MultiplyByQuantizedMultiplier(__m512i x, __m512i multiplier, const Q31Shift& shift) {
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(SaturatingShiftLeft(x, shift.left), multiplier),
                             shift.right);
}

}  // namespace avx512
}  // namespace
}  // namespace octet
