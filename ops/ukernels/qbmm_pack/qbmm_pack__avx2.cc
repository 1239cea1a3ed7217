// The AVX2 QBatchMatMul packing kernel for the x86 qgemm layout (n16k4a64): per panel of 16 columns and group of 4
// k, four 16-byte rows of B are shifted and interleaved (byte then word unpacks) into the layout's 64-byte row of
// 16 columns x 4 k; the column sums come from vpmaddubsw / vpmaddwd on the packed rows. Partial panels and rows
// go through a 16-byte copy padded with the shift code (zero once shifted), so any N reads only B's block.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/ukernels/qbmm_pack.h"

namespace octet {

void qbmm_pack_n16k4_ukernel__avx2(const QGemmLayout& layout, const uint8_t* b, size_t b_stride, size_t k, size_t n,
                                   uint8_t shift, int8_t* packed, int32_t* col_sums) {
  const size_t np = layout.PaddedN(n), kp = layout.PaddedK(k);
  const size_t panel_stride = layout.PanelStride(k);
  const __m128i vshift = _mm_set1_epi8(static_cast<char>(shift));
  const __m128i ones8 = _mm_set1_epi8(1);
  const __m128i ones16 = _mm_set1_epi16(1);
  for (size_t j0 = 0; j0 < np; j0 += 16) {
    int8_t* panel = packed + j0 / 16 * panel_stride;
    const size_t cols = std::min<size_t>(16, n - j0);
    __m128i sums[4] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
    for (size_t k0 = 0; k0 < kp; k0 += 4) {
      __m128i r[4];
      for (size_t q = 0; q < 4; ++q) {
        const size_t kk = k0 + q;
        if (kk >= k) {
          r[q] = _mm_setzero_si128();
          continue;
        }
        const uint8_t* row = b + kk * b_stride + j0;
        __m128i v;
        if (cols == 16) {
          v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row));
        } else {
          alignas(16) uint8_t tmp[16];
          std::memset(tmp, shift, sizeof(tmp));
          std::memcpy(tmp, row, cols);
          v = _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
        }
        r[q] = _mm_sub_epi8(v, vshift);
      }
      const __m128i t0 = _mm_unpacklo_epi8(r[0], r[1]), t1 = _mm_unpackhi_epi8(r[0], r[1]);
      const __m128i t2 = _mm_unpacklo_epi8(r[2], r[3]), t3 = _mm_unpackhi_epi8(r[2], r[3]);
      const __m128i o[4] = {_mm_unpacklo_epi16(t0, t2), _mm_unpackhi_epi16(t0, t2), _mm_unpacklo_epi16(t1, t3),
                            _mm_unpackhi_epi16(t1, t3)};
      int8_t* dst = panel + k0 / 4 * 64;
      for (size_t c = 0; c < 4; ++c) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16 * c), o[c]);
        sums[c] = _mm_add_epi32(sums[c], _mm_madd_epi16(_mm_maddubs_epi16(ones8, o[c]), ones16));
      }
    }
    for (size_t c = 0; c < 4; ++c) _mm_storeu_si128(reinterpret_cast<__m128i*>(col_sums + j0 + 4 * c), sums[c]);
  }
}

}  // namespace octet
