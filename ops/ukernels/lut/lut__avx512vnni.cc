// The AVX-512 byte lookup kernel: 64 bytes per step by 16 vpshufb on zmm (AVX-512BW, lut_nibbles.h); the tail
// through masked loads and stores.
#include <immintrin.h>

#include <cstring>

#include "ops/ukernels/lut.h"
#include "ops/ukernels/lut/lut_nibbles.h"

namespace octet {
namespace {

struct Avx512Ops {
  using V = __m512i;
  static __m512i Broadcast16(const uint8_t* p) {
    uint8_t four[64];
    for (size_t i = 0; i < 4; ++i) std::memcpy(four + 16 * i, p, 16);
    return _mm512_loadu_si512(four);
  }
  static __m512i Set1(uint8_t v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  static __m512i Sub(__m512i a, __m512i b) { return _mm512_sub_epi8(a, b); }
  static __m512i AddsU8(__m512i a, __m512i b) { return _mm512_adds_epu8(a, b); }
  static __m512i Shuffle(__m512i t, __m512i i) { return _mm512_shuffle_epi8(t, i); }
  static __m512i Or(__m512i a, __m512i b) { return _mm512_or_si512(a, b); }
};

}  // namespace

void lut_u8_ukernel__avx512vnni(const uint8_t* table, const uint8_t* x, size_t n, uint8_t* y) {
  const lut_nibbles::Chunks<Avx512Ops> chunks(table);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i v = _mm512_loadu_si512(x + i);
    _mm512_storeu_si512(y + i, chunks.Lookup(v));
  }
  if (i < n) {
    const __mmask64 mask = _cvtu64_mask64((uint64_t{1} << (n - i)) - 1);
    const __m512i v = _mm512_maskz_loadu_epi8(mask, x + i);
    _mm512_mask_storeu_epi8(y + i, mask, chunks.Lookup(v));
  }
}

}  // namespace octet
