// LSTM backward (ONNX LSTM semantics as ops/float/rnn.cc: gates i, o, f, c; forward, reverse or bidirectional;
// layout 0; default activations sigmoid/tanh/tanh): backpropagation through time. The forward is recomputed per
// direction (in double) to recover every step's gates and cell state, then the steps are walked backwards:
//   dc_t += dh_t o tanh'(c_t); di = dc g; dg = dc i; df = dc c_{t-1}; do = dh tanh(c_t); dc_{t-1} = dc f
// and the gate pre-activation gradients a_t give dW += a_t^T x_t, dR += a_t^T h_{t-1}, dWb = dRb = sum a_t,
// dx_t = a_t W, dh_{t-1} = a_t R. Peepholes, clip, sequence_lens and input_forget are not supported (refused).
#pragma once

#include "ops/float/grad/backward.h"

namespace octet::float_ops {

Status RegisterLstmBackward(BackwardRegistry& registry);

}  // namespace octet::float_ops
