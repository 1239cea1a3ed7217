// The AVX2 transpose kernel. Contiguous rows (step 1) go in blocks of 16 rows: 32 columns at a time in ymm, 16 in
// xmm, the rest (and strided sources) in the portable 8x8 word blocks.
//
// A 16x16 byte block takes four rounds of interleaving row k with row k + 8 (each round rotates the 8-bit (row,
// column) index left by one bit, so four make the transpose): 64 unpacks per 256 bytes, several times fewer
// operations than the 8x8 word transposes. vpunpck*bw on ymm interleaves within each 128-bit lane, so a ymm row
// holding 32 source bytes transposes two side-by-side 16x16 blocks at once: half the shuffles per byte of the xmm
// version, and the shuffle port is what limits it.
#include <immintrin.h>

#include "ops/ukernels/transpose.h"
#include "ops/ukernels/transpose/words.h"

namespace octet {
namespace {

// src: 16 rows of 32 bytes; dst: 32 rows of 16 bytes.
inline void Transpose16x32(const uint8_t* src, size_t src_stride, uint8_t* dst, size_t dst_stride) {
  __m256i r[16], t[16];
  for (size_t k = 0; k < 16; ++k) r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k * src_stride));
  for (int round = 0; round < 4; ++round) {
    for (int k = 0; k < 8; ++k) {
      t[2 * k] = _mm256_unpacklo_epi8(r[k], r[k + 8]);
      t[2 * k + 1] = _mm256_unpackhi_epi8(r[k], r[k + 8]);
    }
    for (int k = 0; k < 16; ++k) r[k] = t[k];
  }
  // Lane 0 of r[k] is the left block's transposed row k, lane 1 the right block's.
  for (size_t k = 0; k < 16; ++k) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + k * dst_stride), _mm256_castsi256_si128(r[k]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (k + 16) * dst_stride), _mm256_extracti128_si256(r[k], 1));
  }
}

// src: 16 rows of 16 bytes; dst: 16 rows of 16 bytes.
inline void Transpose16x16(const uint8_t* src, size_t src_stride, uint8_t* dst, size_t dst_stride) {
  __m128i r[16], t[16];
  for (size_t k = 0; k < 16; ++k) r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k * src_stride));
  for (int round = 0; round < 4; ++round) {
    for (int k = 0; k < 8; ++k) {
      t[2 * k] = _mm_unpacklo_epi8(r[k], r[k + 8]);
      t[2 * k + 1] = _mm_unpackhi_epi8(r[k], r[k + 8]);
    }
    for (int k = 0; k < 16; ++k) r[k] = t[k];
  }
  for (size_t k = 0; k < 16; ++k) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + k * dst_stride), r[k]);
}

}  // namespace

void transpose_x8_ukernel__avx2(const uint8_t* src, size_t src_stride, size_t step, size_t rows, size_t cols,
                                uint8_t* dst, size_t dst_stride) {
  size_t i = 0;
  if (step == 1) {
    for (; i + 16 <= rows; i += 16) {
      size_t j = 0;
      for (; j + 32 <= cols; j += 32)
        Transpose16x32(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
      for (; j + 16 <= cols; j += 16)
        Transpose16x16(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
      transpose::TransposeWords(src + i * src_stride + j, src_stride, 1, 16, cols - j, dst + j * dst_stride + i,
                                dst_stride);
    }
  }
  transpose::TransposeWords(src + i * src_stride, src_stride, step, rows - i, cols, dst + i, dst_stride);
}

}  // namespace octet
