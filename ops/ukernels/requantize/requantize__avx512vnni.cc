// AVX-512 requantize kernels, fp32 and q31 schemes (avx512vnni tier; only AVX-512 F/BW/DQ/VL instructions).
//
// Each row of the [rows x channels] block is processed 16 channels per vector with a masked tail (no over-read);
// per-channel parameters are loaded with the same mask, per-tensor ones broadcast once.
// fp32: vcvtdq2ps (nearest even), one multiply, clamp in float to [lo - zp, hi - zp] (clamping integers before
//   rounding equals clamping after), vcvtps2dq (nearest even), add zp, vpmovdb.
// q31: MultiplyByQuantizedMultiplier from fixedpoint/avx512.h, clamp in int32, add zp.
#include <immintrin.h>

#include <type_traits>

#include "ops/ukernels/fixedpoint/avx512.h"
#include "ops/ukernels/requantize.h"

namespace octet {
namespace {

inline __mmask16 TailMask(size_t left) { return static_cast<__mmask16>(left >= 16 ? 0xFFFFu : (1u << left) - 1u); }

template <typename T>
inline void Store8(T* dst, __mmask16 m, __m512i v) {
  _mm512_mask_cvtepi32_storeu_epi8(dst, m, v);
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
  const __m512i broadcast_mult = _mm512_set1_epi32(p.per_channel ? 0 : p.multipliers[0]);
  const __m512i broadcast_shift = _mm512_set1_epi32(p.per_channel ? 0 : p.shifts[0]);
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * acc_stride;
    T* out = y + r * y_stride;
    for (size_t c = 0; c < channels; c += 16) {
      const __mmask16 m = TailMask(channels - c);
      const __m512i mult = p.per_channel ? _mm512_maskz_loadu_epi32(m, p.multipliers + c) : broadcast_mult;
      const __m512i shift = p.per_channel ? _mm512_maskz_loadu_epi32(m, p.shifts + c) : broadcast_shift;
      __m512i v = avx512::MultiplyByQuantizedMultiplier(_mm512_maskz_loadu_epi32(m, a + c), mult,
                                                        avx512::SplitShift(shift));
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
