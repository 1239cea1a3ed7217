// The portable QSoftmax u8 -> u8 row kernel: the reference itself (the operator runs its own scalar row with a
// double-estimated division where no SIMD kernel is enabled).
#include "ops/ukernels/qsoftmax.h"

namespace octet {

void qsoftmax_u8_u8_ukernel__scalar(const reference::QSoftmaxParams& params, int64_t n, const uint8_t* x, uint8_t* y) {
  reference::QSoftmaxRow(params, n, x, y);
}

}  // namespace octet
