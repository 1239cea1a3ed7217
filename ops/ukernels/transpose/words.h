// The portable part of every transpose kernel: 8x8 byte blocks transposed as eight 64-bit words, scalar edges. The
// scalar kernel is this alone; SIMD kernels use it for strided sources and for the edges of their blocks.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace octet::transpose {

static_assert(std::endian::native == std::endian::little, "the 8x8 byte transpose reads rows as little-endian words");

// 8 bytes src[0], src[step], ..., src[7 * step] as one little-endian word.
inline uint64_t Load8(const uint8_t* src, size_t step) {
  uint64_t v = 0;
  if (step == 1) {
    std::memcpy(&v, src, 8);
    return v;
  }
  for (size_t k = 0; k < 8; ++k) v |= uint64_t{src[k * step]} << (8 * k);
  return v;
}

// Transposes an 8x8 byte matrix held as 8 words (row i = r[i], column j = byte j) in place, swapping ever larger
// off-diagonal blocks (bytes, then 16-bit pairs, then 32-bit quads) between rows with shifts and masks.
inline void Transpose8x8(uint64_t r[8]) {
  for (int i = 0; i < 8; i += 2) {
    const uint64_t t = ((r[i] >> 8) ^ r[i + 1]) & 0x00FF00FF00FF00FFull;
    r[i + 1] ^= t;
    r[i] ^= t << 8;
  }
  for (int i : {0, 1, 4, 5}) {
    const uint64_t t = ((r[i] >> 16) ^ r[i + 2]) & 0x0000FFFF0000FFFFull;
    r[i + 2] ^= t;
    r[i] ^= t << 16;
  }
  for (int i = 0; i < 4; ++i) {
    const uint64_t t = ((r[i] >> 32) ^ r[i + 4]) & 0x00000000FFFFFFFFull;
    r[i + 4] ^= t;
    r[i] ^= t << 32;
  }
}

// The family's contract (ops/ukernels/transpose.h) in 8x8 word blocks: a byte-at-a-time transpose with strided
// stores runs at ~2 cycles per byte, as much as the convolution itself on ResNet's 3x3 layers.
inline void TransposeWords(const uint8_t* src, size_t src_stride, size_t step, size_t rows, size_t cols, uint8_t* dst,
                           size_t dst_stride) {
  size_t i = 0;
  for (; i + 8 <= rows; i += 8) {
    size_t j = 0;
    for (; j + 8 <= cols; j += 8) {
      uint64_t r[8];
      for (size_t k = 0; k < 8; ++k) r[k] = Load8(src + (i + k) * src_stride + j * step, step);
      Transpose8x8(r);
      for (size_t k = 0; k < 8; ++k) std::memcpy(dst + (j + k) * dst_stride + i, &r[k], 8);
    }
    for (; j < cols; ++j) {
      for (size_t k = 0; k < 8; ++k) dst[j * dst_stride + i + k] = src[(i + k) * src_stride + j * step];
    }
  }
  for (; i < rows; ++i) {
    for (size_t j = 0; j < cols; ++j) dst[j * dst_stride + i] = src[i * src_stride + j * step];
  }
}

}  // namespace octet::transpose
