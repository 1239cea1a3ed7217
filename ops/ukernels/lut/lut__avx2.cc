// The AVX2 byte lookup kernel: 32 bytes per step by 16 vpshufb (lut_nibbles.h); the tail in scalar code.
#include <immintrin.h>

#include "ops/ukernels/lut.h"
#include "ops/ukernels/lut/lut_nibbles.h"

namespace octet {
namespace {

struct Avx2Ops {
  using V = __m256i;
  static __m256i Broadcast16(const uint8_t* p) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m256i Set1(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static __m256i Sub(__m256i a, __m256i b) { return _mm256_sub_epi8(a, b); }
  static __m256i AddsU8(__m256i a, __m256i b) { return _mm256_adds_epu8(a, b); }
  static __m256i Shuffle(__m256i t, __m256i i) { return _mm256_shuffle_epi8(t, i); }
  static __m256i Or(__m256i a, __m256i b) { return _mm256_or_si256(a, b); }
};

}  // namespace

void lut_u8_ukernel__avx2(const uint8_t* table, const uint8_t* x, size_t n, uint8_t* y) {
  const lut_nibbles::Chunks<Avx2Ops> chunks(table);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), chunks.Lookup(v));
  }
  for (; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace octet
