// The scalar transpose kernel: the portable 8x8 word blocks (words.h).
#include "ops/ukernels/transpose.h"
#include "ops/ukernels/transpose/words.h"

namespace octet {

void transpose_x8_ukernel__scalar(const uint8_t* src, size_t src_stride, size_t step, size_t rows, size_t cols,
                                  uint8_t* dst, size_t dst_stride) {
  transpose::TransposeWords(src, src_stride, step, rows, cols, dst, dst_stride);
}

}  // namespace octet
