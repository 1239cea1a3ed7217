// The scalar LSTM cell kernel: std::exp and std::tanh per element, as the recurrence computes it for the other
// variants (clip, peepholes).
#include <cmath>

#include "ops/float/ukernels/lstm_gates.h"

namespace octet::float_ops {

void lstm_gates_f32_ukernel__scalar(const float* xw, const float* rec, float* c, float* h, int64_t hidden) {
  const int64_t H = hidden;
  auto sigmoid = [](float x) { return 1.0f / (1.0f + std::exp(-x)); };
  for (int64_t k = 0; k < H; ++k) {
    const float iv = sigmoid(xw[k] + rec[k]);
    const float fv = sigmoid(xw[2 * H + k] + rec[2 * H + k]);
    const float gv = std::tanh(xw[3 * H + k] + rec[3 * H + k]);
    const float cn = fv * c[k] + iv * gv;
    const float ov = sigmoid(xw[H + k] + rec[H + k]);
    c[k] = cn;
    h[k] = ov * std::tanh(cn);
  }
}

}  // namespace octet::float_ops
