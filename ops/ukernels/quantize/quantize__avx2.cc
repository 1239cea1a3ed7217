// AVX2 quantize kernels.
//
// 8 floats per vector. u8 / s8 take 32 per iteration: scale, clamp in float to [quant_min - zp, quant_max - zp]
// (clamping integers before rounding equals clamping after), zero NaN lanes, vcvtps2dq (round to nearest even),
// add zp, then vpackssdw + vpack{us,ss}wb and one cross-lane permute. s32 widens to double, rounds, adds zp and
// clamps there, as the AVX-512 kernel does. Tails of fewer than 32 (or 8) elements go through a staging buffer: no over-read, no over-write.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ops/ukernels/quantize.h"

namespace octet {
namespace {

inline __m256i ScaleClampRound(__m256 x, __m256 inv_scale, __m256 lo, __m256 hi, __m256i zp, size_t* nans) {
  __m256 v = _mm256_mul_ps(x, inv_scale);
  const __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  *nans += static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(is_nan))));
  v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));  // NaN stays NaN (second operand), then is zeroed
  v = _mm256_andnot_ps(is_nan, v);
  return _mm256_add_epi32(_mm256_cvtps_epi32(v), zp);
}

template <typename T>
size_t Quantize8(size_t n, const float* x, T* y, const QuantizeParams& p) {
  const __m256 inv_scale = _mm256_set1_ps(p.inv_scale);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(p.quant_min - p.zero_point));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(p.quant_max - p.zero_point));
  const __m256i zp = _mm256_set1_epi32(p.zero_point);
  const __m256i unshuffle = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  size_t nans = 0;
  auto block32 = [&](const float* src, T* dst, bool stream) {
    const __m256i q0 = ScaleClampRound(_mm256_loadu_ps(src), inv_scale, lo, hi, zp, &nans);
    const __m256i q1 = ScaleClampRound(_mm256_loadu_ps(src + 8), inv_scale, lo, hi, zp, &nans);
    const __m256i q2 = ScaleClampRound(_mm256_loadu_ps(src + 16), inv_scale, lo, hi, zp, &nans);
    const __m256i q3 = ScaleClampRound(_mm256_loadu_ps(src + 24), inv_scale, lo, hi, zp, &nans);
    const __m256i w01 = _mm256_packs_epi32(q0, q1);  // values are in range: no saturation happens
    const __m256i w23 = _mm256_packs_epi32(q2, q3);
    __m256i b;
    if constexpr (std::is_same_v<T, uint8_t>) {
      b = _mm256_packus_epi16(w01, w23);
    } else {
      b = _mm256_packs_epi16(w01, w23);
    }
    const __m256i out = _mm256_permutevar8x32_epi32(b, unshuffle);
    if (stream) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), out);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), out);
    }
  };
  const bool stream = p.stream_stores && reinterpret_cast<uintptr_t>(y) % 32 == 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) block32(x + i, y + i, stream);
  if (stream) _mm_sfence();
  if (i < n) {
    alignas(32) float in[32] = {};
    alignas(32) T out[32];
    const size_t left = n - i;
    std::memcpy(in, x + i, left * sizeof(float));
    block32(in, out, false);
    std::memcpy(y + i, out, left * sizeof(T));
    // The zero padding of `in` is never NaN, so the count stays exact.
  }
  return nans;
}

}  // namespace

size_t quantize_f32_u8_ukernel__avx2(size_t n, const float* x, uint8_t* y, const QuantizeParams& p) {
  return Quantize8(n, x, y, p);
}

size_t quantize_f32_s8_ukernel__avx2(size_t n, const float* x, int8_t* y, const QuantizeParams& p) {
  return Quantize8(n, x, y, p);
}

size_t quantize_f32_s32_ukernel__avx2(size_t n, const float* x, int32_t* y, const QuantizeParams& p) {
  const __m256 inv_scale = _mm256_set1_ps(p.inv_scale);
  const __m256d lo = _mm256_set1_pd(static_cast<double>(p.quant_min));
  const __m256d hi = _mm256_set1_pd(static_cast<double>(p.quant_max));
  const __m256d zp = _mm256_set1_pd(static_cast<double>(p.zero_point));
  // rne first, then + zp (exact in double), then clamp: the result is an integer inside int32.
  auto finish = [&](__m256d d) {
    d = _mm256_add_pd(_mm256_round_pd(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
    return _mm256_cvtpd_epi32(_mm256_min_pd(hi, _mm256_max_pd(lo, d)));
  };
  size_t nans = 0;
  auto block8 = [&](const float* src, int32_t* dst) {
    __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src), inv_scale);
    const __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    nans += static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(is_nan))));
    v = _mm256_andnot_ps(is_nan, v);
    const __m256d d0 = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
    const __m256d d1 = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), finish(d0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 4), finish(d1));
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) block8(x + i, y + i);
  if (i < n) {
    alignas(32) float in[8] = {};
    alignas(32) int32_t out[8];
    const size_t left = n - i;
    std::memcpy(in, x + i, left * sizeof(float));
    block8(in, out);
    std::memcpy(y + i, out, left * sizeof(int32_t));
  }
  return nans;
}

}  // namespace octet
