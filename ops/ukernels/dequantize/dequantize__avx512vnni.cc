// AVX-512 dequantize kernels (avx512vnni tier; only AVX-512 F/BW/DQ/VL instructions are used).
//
// 16 elements per vector, masked tail (no over-read); with stream_stores and a 64-byte aligned output, u8 / s8
// full vectors use non-temporal stores followed by an sfence. u8 / s8: widen to int32, subtract zp (exact), vcvtdq2ps
// (exact: |q - zp| < 2^9), one multiply. s32: q - zp is taken in double (exact, |q - zp| < 2^33) and rounded
// once to float by vcvtpd2ps (round to nearest even), then one multiply.
#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "ops/ukernels/dequantize.h"

namespace octet {
namespace {

template <typename T>
void Dequantize8(size_t n, const T* q, float* y, const DequantizeParams& p) {
  const __m512 scale = _mm512_set1_ps(p.scale);
  const __m512i zp = _mm512_set1_epi32(p.zero_point);
  const bool stream = p.stream_stores && reinterpret_cast<uintptr_t>(y) % 64 == 0;
  size_t i = 0;
  if (stream) {
    for (; i + 16 <= n; i += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i));
      const __m512i v = std::is_same_v<T, uint8_t> ? _mm512_cvtepu8_epi32(bytes) : _mm512_cvtepi8_epi32(bytes);
      _mm512_stream_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, zp)), scale));
    }
    _mm_sfence();
  }
  for (; i < n; i += 16) {
    const size_t left = n - i < 16 ? n - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << left) - 1u);
    const __m128i bytes = _mm_maskz_loadu_epi8(m, q + i);
    __m512i v;
    if constexpr (std::is_same_v<T, uint8_t>) {
      v = _mm512_cvtepu8_epi32(bytes);
    } else {
      v = _mm512_cvtepi8_epi32(bytes);
    }
    const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, zp)), scale);
    _mm512_mask_storeu_ps(y + i, m, f);
  }
}

}  // namespace

void dequantize_u8_f32_ukernel__avx512vnni(size_t n, const uint8_t* q, float* y, const DequantizeParams& p) {
  Dequantize8(n, q, y, p);
}

void dequantize_s8_f32_ukernel__avx512vnni(size_t n, const int8_t* q, float* y, const DequantizeParams& p) {
  Dequantize8(n, q, y, p);
}

void dequantize_s32_f32_ukernel__avx512vnni(size_t n, const int32_t* q, float* y, const DequantizeParams& p) {
  const __m512 scale = _mm512_set1_ps(p.scale);
  const __m512d zp = _mm512_set1_pd(static_cast<double>(p.zero_point));
  for (size_t i = 0; i < n; i += 16) {
    const size_t left = n - i < 16 ? n - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << left) - 1u);
    const __m512i v = _mm512_maskz_loadu_epi32(m, q + i);
    const __m512d d0 = _mm512_sub_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(v)), zp);
    const __m512d d1 = _mm512_sub_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(v, 1)), zp);
    const __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(d0)), _mm512_cvtpd_ps(d1), 1);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(f, scale));
  }
}

}  // namespace octet
