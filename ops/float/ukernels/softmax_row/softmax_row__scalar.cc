// The scalar softmax-row kernel: the reference, the loop the Softmax operator ran before the kernel family existed
// (std::exp per element, a sequential sum), so the scalar tier's results are unchanged.
#include <algorithm>
#include <cmath>

#include "ops/float/ukernels/softmax_row.h"

namespace octet::float_ops {

void softmax_row_f32_ukernel__scalar(const float* x, float* y, int64_t n) {
  float m = -INFINITY;
  for (int64_t k = 0; k < n; ++k) m = std::max(m, x[k]);
  float sum = 0.0f;
  for (int64_t k = 0; k < n; ++k) {
    const float e = std::exp(x[k] - m);
    y[k] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
  for (int64_t k = 0; k < n; ++k) y[k] *= inv;
}

}  // namespace octet::float_ops
