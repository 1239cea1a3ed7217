// The q31 fixed-point primitives on AVX2, 8 int32 lanes per ymm, for every kernel built with AVX2 (qgemm,
// qdwconv, requantize). Bit for bit ops/reference/fixed_point.h; one header per ISA as in gemmlowp's fixedpoint/.
// Everything has internal linkage: each ISA object library compiles its own copy with its own flags, so a copy
// built with wider instructions can never be the one the linker keeps for an AVX2 kernel.
//
// SaturatingRoundingDoublingHighMul: floor((a*b + 2^30) / 2^31) from vpmuldq on even and odd lanes. This is the
//   reference's nudge-then-truncate value for every product; the one saturating case (a == b == INT32_MIN) cannot
//   occur because q31 multipliers are >= 0.
// RoundingDivideByPOT: the reference's remainder/threshold rule (ties away from zero), exponent in [0, 31].
// SaturatingShiftLeft: vpsllvd, with overflow found by shifting back.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace octet {
namespace {
namespace avx2 {

// Requires b >= 0 in every lane.
inline __m256i SaturatingRoundingDoublingHighMul(__m256i a, __m256i b) {
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, b), half), 31);
  const __m256i odd = _mm256_slli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), half), 1);
  return _mm256_blend_epi32(even, odd, 0xAA);
}

inline __m256i SaturatingShiftLeft(__m256i x, __m256i left) {
  const __m256i shifted = _mm256_sllv_epi32(x, left);
  const __m256i overflow =
      _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_srav_epi32(shifted, left), x), _mm256_set1_epi32(-1));
  // INT32_MAX for x >= 0, INT32_MIN for x < 0: flip INT32_MAX's bits by x's sign.
  const __m256i saturated = _mm256_xor_si256(_mm256_set1_epi32(INT32_MAX), _mm256_srai_epi32(x, 31));
  return _mm256_blendv_epi8(shifted, saturated, overflow);
}

inline __m256i RoundingDivideByPOT(__m256i x, __m256i exponent) {
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, exponent), one);
  const __m256i remainder = _mm256_and_si256(x, mask);
  // threshold = mask / 2 + (x < 0): subtracting the all-ones compare result adds 1.
  const __m256i threshold = _mm256_sub_epi32(_mm256_srli_epi32(mask, 1), _mm256_cmpgt_epi32(_mm256_setzero_si256(), x));
  return _mm256_sub_epi32(_mm256_srav_epi32(x, exponent), _mm256_cmpgt_epi32(remainder, threshold));
}

// A QuantizeMultiplier shift split once per group of channels, outside the row loop.
struct Q31Shift {
  __m256i left;   // max(shift, 0)
  __m256i right;  // max(-shift, 0), the RoundingDivideByPOT exponent
};

inline Q31Shift SplitShift(__m256i shift) {
  const __m256i zero = _mm256_setzero_si256();
  return {_mm256_max_epi32(shift, zero), _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero)};
}

// The reference's MultiplyByQuantizedMultiplier, multiplier in [0, 2^31 - 1].
inline __m256i MultiplyByQuantizedMultiplier(__m256i x, __m256i multiplier, const Q31Shift& shift) {
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(SaturatingShiftLeft(x, shift.left), multiplier),
                             shift.right);
}

}  // namespace avx2
}  // namespace
}  // namespace octet
