// The scalar erf kernel: std::erf per element.
#include <cmath>

#include "ops/float/ukernels/erf.h"

namespace octet::float_ops {

void erf_f32_ukernel__scalar(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
}

}  // namespace octet::float_ops
