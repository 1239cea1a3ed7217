// The float LSTM cell kernel family: one batch row of ONNX's LSTM equations (gate order i, o, f, c; sigmoid, tanh,
// tanh; no clip, no peepholes) from the two projections, updating the cell and hidden state in place. The float
// LSTM operator picks the kernel once, at Prepare (ops/float/rnn.cc); the recurrence (rnn_recurrence.cc) runs it.
// SIMD kernels use xsimd's vector exp and tanh: not bit-exact against the scalar one, tested with a tolerance.
#pragma once

#include <cstdint>
#include <span>

#include "core/ukernel_list.h"

namespace octet::float_ops {

// For k < hidden: i = sigmoid(xw[k] + rec[k]), o = sigmoid(xw[H + k] + rec[H + k]),
// f = sigmoid(xw[2H + k] + rec[2H + k]), g = tanh(xw[3H + k] + rec[3H + k]); c[k] = f c[k] + i g; h[k] = o tanh(c[k]).
using LstmGatesFn = void (*)(const float* xw, const float* rec, float* c, float* h, int64_t hidden);

#define OCTET_LSTM_GATES_UKERNEL(isa, fn) \
  void fn(const float* xw, const float* rec, float* c, float* h, int64_t hidden);
#include "ops/float/ukernels/lstm_gates.inc"
#undef OCTET_LSTM_GATES_UKERNEL

// Candidates, best first, scalar last.
std::span<const UkernelEntry<LstmGatesFn>> LstmGatesUkernels();

}  // namespace octet::float_ops
