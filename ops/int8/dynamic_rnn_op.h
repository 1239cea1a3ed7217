// DynamicQLSTM and DynamicQGRU (ops/int8/int8_ops.h): ONNX LSTM / GRU (the recurrence of ops/float/rnn_recurrence.h,
// equations in ops/float/rnn.h) with W and R as s8 constants, per tensor or per channel along axis 1 (the gate rows
// G * hidden), symmetric. As PyTorch's dynamic LSTM on CPU: per direction, the input projection of the whole
// sequence is one dynamic int8 GEMM (activation qparams from the whole X), and each step's recurrent projection is
// another (qparams from that step's h; GRU without linear_before_reset also quantizes r . h on its own); biases and
// gates in float. Attribute reduce_range (0|1) as DynamicQGemm's.
#pragma once

#include "core/op_registry.h"

namespace octet {

Status RegisterDynamicRnnOps(OpRegistry& registry);

}  // namespace octet
