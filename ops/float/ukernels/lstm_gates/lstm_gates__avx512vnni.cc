// AVX-512 LSTM cell kernel (avx512vnni tier; uses AVX-512F only): 16 units at a time
// (ops/float/ukernels/lstm_gates/lstm_gates_simd.h).
// GCC 12 reports the _mm512_undefined_* placeholders inside its own intrinsics, inlined into xsimd's exp and tanh,
// as uninitialized (the ISA's object library already silences the maybe-uninitialized form).
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "ops/float/ukernels/lstm_gates/lstm_gates_simd.h"

namespace octet::float_ops {

void lstm_gates_f32_ukernel__avx512vnni(const float* xw, const float* rec, float* c, float* h, int64_t hidden) {
  lstm_gates_simd::Cell<xsimd::avx512f>(xw, rec, c, h, hidden);
}

}  // namespace octet::float_ops
