// AVX2 + FMA LSTM cell kernel: 8 units at a time (ops/float/ukernels/lstm_gates/lstm_gates_simd.h).
#include "ops/float/ukernels/lstm_gates/lstm_gates_simd.h"

namespace octet::float_ops {

void lstm_gates_f32_ukernel__avx2(const float* xw, const float* rec, float* c, float* h, int64_t hidden) {
  lstm_gates_simd::Cell<xsimd::fma3<xsimd::avx2>>(xw, rec, c, h, hidden);
}

}  // namespace octet::float_ops
