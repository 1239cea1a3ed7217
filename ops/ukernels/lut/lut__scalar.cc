// The portable byte lookup kernel: one table load per byte.
#include "ops/ukernels/lut.h"

namespace octet {

void lut_u8_ukernel__scalar(const uint8_t* table, const uint8_t* x, size_t n, uint8_t* y) {
  for (size_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace octet
