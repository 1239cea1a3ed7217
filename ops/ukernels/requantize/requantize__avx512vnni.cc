// AVX-512 requantize kernels, fp32 and q31 schemes (avx512vnni tier; only AVX-512 F/BW/DQ/VL instructions).
//
// Each row of the [rows x channels] block is processed 16 channels per vector with a masked tail (no over-read);
// per-channel parameters are loaded with the same mask, per-tensor ones broadcast once.
// fp32: vcvtdq2ps (nearest even), one multiply, clamp in float to [lo - zp, hi - zp] (clamping integers before
//   rounding equals clamping after), vcvtps2dq (nearest even), add zp, vpmovdb.
// q31: saturating left shift (vpsllvd, overflow detected by shifting back), SaturatingRoundingDoublingHighMul as
//   floor((a*b + 2^30) / 2^31) — the same value as gemmlowp's truncating form for every product — from vpmuldq on
//   even and odd lanes, RoundingDivideByPOT with the remainder/threshold rule, clamp in int32, add zp.
#include <immintrin.h>

#include <type_traits>

#include "ops/ukernels/requantize.h"

namespace octet {
namespace {

inline __mmask16 TailMask(size_t left) { return static_cast<__mmask16>(left >= 16 ? 0xFFFFu : (1u << left) - 1u); }

template <typename T>
inline void Store8(T* dst, __mmask16 m, __m512i v) {
  _mm512_mask_cvtepi32_storeu_epi8(dst, m, v);
}

// a * b / 2^31 rounded to nearest, ties toward +infinity, for b >= 0 (so a == b == INT32_MIN cannot occur).
inline __m512i RoundingDoublingHighMul(__m512i a, __m512i b) {
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
  const __m512i saturated = _mm512_mask_blend_epi32(negative, _mm512_set1_epi32(INT32_MAX),
                                                    _mm512_set1_epi32(INT32_MIN));
  return _mm512_mask_blend_epi32(overflow, shifted, saturated);
}

inline __m512i RoundingDivideByPOT(__m512i x, __m512i exponent) {
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, exponent), one);
  const __m512i remainder = _mm512_and_si512(x, mask);
  __m512i threshold = _mm512_srli_epi32(mask, 1);
  threshold = _mm512_mask_add_epi32(threshold, _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512()), threshold, one);
  const __m512i shifted = _mm512_srav_epi32(x, exponent);
  return _mm512_mask_add_epi32(shifted, _mm512_cmpgt_epi32_mask(remainder, threshold), shifted, one);
}

template <typename T>
void RequantizeFp32Rows(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y, size_t y_stride,
                    const RequantizeFp32Params& p) {
  const __m512 lo = _mm512_set1_ps(static_cast<float>(p.lo - p.zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(p.hi - p.zero_point));
  const __m512i zp = _mm512_set1_epi32(p.zero_point);
  const __m512 broadcast = _mm512_set1_ps(p.per_channel ? 0.0f : p.multipliers[0]);
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * acc_stride;
    T* out = y + r * y_stride;
    for (size_t c = 0; c < channels; c += 16) {
      const __mmask16 m = TailMask(channels - c);
      const __m512 mult = p.per_channel ? _mm512_maskz_loadu_ps(m, p.multipliers + c) : broadcast;
      __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, a + c)), mult);
      v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
      Store8(out + c, m, _mm512_add_epi32(_mm512_cvtps_epi32(v), zp));
    }
  }
}

template <typename T>
void RequantizeQ31Rows(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y, size_t y_stride,
                   const RequantizeQ31Params& p) {
  const __m512i lo = _mm512_set1_epi32(p.lo - p.zero_point);
  const __m512i hi = _mm512_set1_epi32(p.hi - p.zero_point);
  const __m512i zp = _mm512_set1_epi32(p.zero_point);
  const __m512i zero = _mm512_setzero_si512();
  const __m512i broadcast_mult = _mm512_set1_epi32(p.per_channel ? 0 : p.multipliers[0]);
  const __m512i broadcast_shift = _mm512_set1_epi32(p.per_channel ? 0 : p.shifts[0]);
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * acc_stride;
    T* out = y + r * y_stride;
    for (size_t c = 0; c < channels; c += 16) {
      const __mmask16 m = TailMask(channels - c);
      const __m512i mult = p.per_channel ? _mm512_maskz_loadu_epi32(m, p.multipliers + c) : broadcast_mult;
      const __m512i shift = p.per_channel ? _mm512_maskz_loadu_epi32(m, p.shifts + c) : broadcast_shift;
      const __m512i left = _mm512_max_epi32(shift, zero);
      const __m512i right = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
      __m512i v = SaturatingShiftLeft(_mm512_maskz_loadu_epi32(m, a + c), left);
      v = RoundingDivideByPOT(RoundingDoublingHighMul(v, mult), right);
      v = _mm512_min_epi32(hi, _mm512_max_epi32(lo, v));
      Store8(out + c, m, _mm512_add_epi32(v, zp));
    }
  }
}

}  // namespace

void requantize_s32_u8_fp32_ukernel__avx512vnni(size_t rows, size_t channels, const int32_t* acc,
                                                size_t acc_stride, uint8_t* y, size_t y_stride,
                                                const RequantizeFp32Params& p) {
  RequantizeFp32Rows(rows, channels, acc, acc_stride, y, y_stride, p);
}
void requantize_s32_s8_fp32_ukernel__avx512vnni(size_t rows, size_t channels, const int32_t* acc,
                                                size_t acc_stride, int8_t* y, size_t y_stride,
                                                const RequantizeFp32Params& p) {
  RequantizeFp32Rows(rows, channels, acc, acc_stride, y, y_stride, p);
}
void requantize_s32_u8_q31_ukernel__avx512vnni(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                               uint8_t* y, size_t y_stride, const RequantizeQ31Params& p) {
  RequantizeQ31Rows(rows, channels, acc, acc_stride, y, y_stride, p);
}
void requantize_s32_s8_q31_ukernel__avx512vnni(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                               int8_t* y, size_t y_stride, const RequantizeQ31Params& p) {
  RequantizeQ31Rows(rows, channels, acc, acc_stride, y, y_stride, p);
}

}  // namespace octet
