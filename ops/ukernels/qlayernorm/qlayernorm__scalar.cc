// Scalar QLayerNorm row kernel: the reference itself.
#include "ops/ukernels/qlayernorm.h"

namespace octet {

void qlayernorm_u8_u8_ukernel__scalar(const reference::QLayerNormParams& params, const uint8_t* x, uint8_t* y) {
  reference::QLayerNormRow(params, x, y);
}

}  // namespace octet
