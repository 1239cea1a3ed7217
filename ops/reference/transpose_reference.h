// The spec of the transpose kernel family (ops/ukernels/transpose.h): a byte matrix's transpose, one byte at a time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace octet::reference {

// dst[j * dst_stride + i] = src[i * src_stride + j * step] for i < rows, j < cols; no other byte is read or written.
inline void TransposeBytes(const uint8_t* src, size_t src_stride, size_t step, size_t rows, size_t cols, uint8_t* dst,
                           size_t dst_stride) {
  for (size_t i = 0; i < rows; ++i) {
    for (size_t j = 0; j < cols; ++j) dst[j * dst_stride + i] = src[i * src_stride + j * step];
  }
}

}  // namespace octet::reference
