// The transpose kernel family: the NCHW <-> NHWC staging of the int8 convolution ([c][pixels] <-> [pixels][c]) and
// its strided variant (every step-th pixel, for 1x1 convolutions with stride > 1).
//
// Contract (spec: ops/reference/transpose_reference.h, reference::TransposeBytes):
//   dst[j * dst_stride + i] = src[i * src_stride + j * step] for i < rows, j < cols
// Reads and writes no other byte; src and dst do not overlap. Any sizes, strides and alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/ukernel_list.h"

namespace octet {

using TransposeBytesUkernelFn = void (*)(const uint8_t* src, size_t src_stride, size_t step, size_t rows, size_t cols,
                                         uint8_t* dst, size_t dst_stride);

#define OCTET_TRANSPOSE_UKERNEL(isa, fn)                                                              \
  void fn(const uint8_t* src, size_t src_stride, size_t step, size_t rows, size_t cols, uint8_t* dst, \
          size_t dst_stride);
#include "ops/ukernels/transpose.inc"
#undef OCTET_TRANSPOSE_UKERNEL

std::span<const UkernelEntry<TransposeBytesUkernelFn>> TransposeBytesUkernels();

}  // namespace octet
