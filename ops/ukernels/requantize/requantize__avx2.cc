// AVX2 requantize kernels, fp32 and q31 schemes.
//
// Each row of the [rows x channels] block is processed 8 channels per vector; a channel tail is staged through
// small buffers (accumulators, per-channel parameters, outputs), so nothing is read or written out of bounds.
// fp32: vcvtdq2ps (nearest even), one multiply, clamp in float to [lo - zp, hi - zp] (clamping integers before
//   rounding equals clamping after), vcvtps2dq (nearest even), add zp, narrow.
// q31: MultiplyByQuantizedMultiplier from fixedpoint/avx2.h, clamp in int32, add zp, narrow.
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "ops/ukernels/fixedpoint/avx2.h"
#include "ops/ukernels/requantize.h"

namespace octet {
namespace {

// Narrows 8 int32 lanes already inside the output dtype's range to 8 bytes.
template <typename T>
inline void Store8(T* dst, __m256i v) {
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i b = std::is_same_v<T, uint8_t> ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), b);
}

template <typename T>
void RequantizeFp32Rows(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y, size_t y_stride,
                    const RequantizeFp32Params& p) {
  const __m256 lo = _mm256_set1_ps(static_cast<float>(p.lo - p.zero_point));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(p.hi - p.zero_point));
  const __m256i zp = _mm256_set1_epi32(p.zero_point);
  const __m256 broadcast = _mm256_set1_ps(p.per_channel ? 0.0f : p.multipliers[0]);
  auto block8 = [&](const int32_t* a, const float* mult, T* out) {
    const __m256 m = p.per_channel ? _mm256_loadu_ps(mult) : broadcast;
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a))), m);
    v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    Store8(out, _mm256_add_epi32(_mm256_cvtps_epi32(v), zp));
  };
  const size_t full = channels / 8 * 8;
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * acc_stride;
    T* out = y + r * y_stride;
    for (size_t c = 0; c < full; c += 8) block8(a + c, p.multipliers + c, out + c);
    if (full < channels) {
      const size_t left = channels - full;
      alignas(32) int32_t a_tail[8] = {};
      alignas(32) float m_tail[8] = {};
      alignas(16) T out_tail[16];
      std::memcpy(a_tail, a + full, left * sizeof(int32_t));
      if (p.per_channel) std::memcpy(m_tail, p.multipliers + full, left * sizeof(float));
      block8(a_tail, m_tail, out_tail);
      std::memcpy(out + full, out_tail, left * sizeof(T));
    }
  }
}

template <typename T>
void RequantizeQ31Rows(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y, size_t y_stride,
                   const RequantizeQ31Params& p) {
  const __m256i lo = _mm256_set1_epi32(p.lo - p.zero_point);
  const __m256i hi = _mm256_set1_epi32(p.hi - p.zero_point);
  const __m256i zp = _mm256_set1_epi32(p.zero_point);
  const __m256i broadcast_mult = _mm256_set1_epi32(p.per_channel ? 0 : p.multipliers[0]);
  const __m256i broadcast_shift = _mm256_set1_epi32(p.per_channel ? 0 : p.shifts[0]);
  auto block8 = [&](const int32_t* a, const int32_t* mults, const int32_t* shifts, T* out) {
    const __m256i mult =
        p.per_channel ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mults)) : broadcast_mult;
    const __m256i shift =
        p.per_channel ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(shifts)) : broadcast_shift;
    __m256i v = avx2::MultiplyByQuantizedMultiplier(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)), mult,
                                                    avx2::SplitShift(shift));
    v = _mm256_min_epi32(hi, _mm256_max_epi32(lo, v));
    Store8(out, _mm256_add_epi32(v, zp));
  };
  const size_t full = channels / 8 * 8;
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * acc_stride;
    T* out = y + r * y_stride;
    for (size_t c = 0; c < full; c += 8) block8(a + c, p.multipliers + c, p.shifts + c, out + c);
    if (full < channels) {
      const size_t left = channels - full;
      alignas(32) int32_t a_tail[8] = {};
      alignas(32) int32_t m_tail[8] = {};
      alignas(32) int32_t s_tail[8] = {};
      alignas(16) T out_tail[16];
      std::memcpy(a_tail, a + full, left * sizeof(int32_t));
      if (p.per_channel) {
        std::memcpy(m_tail, p.multipliers + full, left * sizeof(int32_t));
        std::memcpy(s_tail, p.shifts + full, left * sizeof(int32_t));
      }
      block8(a_tail, m_tail, s_tail, out_tail);
      std::memcpy(out + full, out_tail, left * sizeof(T));
    }
  }
}

}  // namespace

void requantize_s32_u8_fp32_ukernel__avx2(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                          uint8_t* y, size_t y_stride, const RequantizeFp32Params& p) {
  RequantizeFp32Rows(rows, channels, acc, acc_stride, y, y_stride, p);
}
void requantize_s32_s8_fp32_ukernel__avx2(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                          int8_t* y, size_t y_stride, const RequantizeFp32Params& p) {
  RequantizeFp32Rows(rows, channels, acc, acc_stride, y, y_stride, p);
}
void requantize_s32_u8_q31_ukernel__avx2(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                         uint8_t* y, size_t y_stride, const RequantizeQ31Params& p) {
  RequantizeQ31Rows(rows, channels, acc, acc_stride, y, y_stride, p);
}
void requantize_s32_s8_q31_ukernel__avx2(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                         int8_t* y, size_t y_stride, const RequantizeQ31Params& p) {
  RequantizeQ31Rows(rows, channels, acc, acc_stride, y, y_stride, p);
}

}  // namespace octet
