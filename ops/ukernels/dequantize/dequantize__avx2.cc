// AVX2 dequantize kernels.
//
// 8 elements per vector. u8 / s8: vpmov{zx,sx}bd to int32, subtract zp (exact), vcvtdq2ps (exact), one multiply.
// s32: q - zp in double (exact), one rounding to float by vcvtpd2ps, one multiply. Tails go through a staging
// buffer (no over-read, no over-write). With stream_stores and a 32-byte aligned output, u8 / s8 full vectors use
// non-temporal stores and an sfence.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ops/ukernels/dequantize.h"

namespace octet {
namespace {

template <typename T>
void Dequantize8(size_t n, const T* q, float* y, const DequantizeParams& p) {
  const __m256 scale = _mm256_set1_ps(p.scale);
  const __m256i zp = _mm256_set1_epi32(p.zero_point);
  auto block8 = [&](const T* src, float* dst, bool stream) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
    __m256i v;
    if constexpr (std::is_same_v<T, uint8_t>) {
      v = _mm256_cvtepu8_epi32(bytes);
    } else {
      v = _mm256_cvtepi8_epi32(bytes);
    }
    const __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, zp)), scale);
    if (stream) {
      _mm256_stream_ps(dst, f);
    } else {
      _mm256_storeu_ps(dst, f);
    }
  };
  const bool stream = p.stream_stores && reinterpret_cast<uintptr_t>(y) % 32 == 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) block8(q + i, y + i, stream);
  if (stream) _mm_sfence();
  if (i < n) {
    alignas(16) T in[16] = {};
    alignas(32) float out[8];
    std::memcpy(in, q + i, (n - i) * sizeof(T));
    block8(in, out, false);
    std::memcpy(y + i, out, (n - i) * sizeof(float));
  }
}

}  // namespace

void dequantize_u8_f32_ukernel__avx2(size_t n, const uint8_t* q, float* y, const DequantizeParams& p) {
  Dequantize8(n, q, y, p);
}

void dequantize_s8_f32_ukernel__avx2(size_t n, const int8_t* q, float* y, const DequantizeParams& p) {
  Dequantize8(n, q, y, p);
}

void dequantize_s32_f32_ukernel__avx2(size_t n, const int32_t* q, float* y, const DequantizeParams& p) {
  const __m256 scale = _mm256_set1_ps(p.scale);
  const __m256d zp = _mm256_set1_pd(static_cast<double>(p.zero_point));
  auto block8 = [&](const int32_t* src, float* dst) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 4));
    const __m128 f0 = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtepi32_pd(lo), zp));
    const __m128 f1 = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtepi32_pd(hi), zp));
    _mm256_storeu_ps(dst, _mm256_mul_ps(_mm256_set_m128(f1, f0), scale));
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) block8(q + i, y + i);
  if (i < n) {
    alignas(32) int32_t in[8] = {};
    alignas(32) float out[8];
    std::memcpy(in, q + i, (n - i) * sizeof(int32_t));
    block8(in, out);
    std::memcpy(y + i, out, (n - i) * sizeof(float));
  }
}

}  // namespace octet
