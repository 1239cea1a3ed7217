// LSTM and GRU with ONNX semantics (opsets 13-17): directions forward / reverse / bidirectional, optional bias,
// sequence_lens (steps past a sequence's length leave Y at 0 and its state unchanged), initial states, LSTM
// peepholes, clip, layout 0 ([seq, batch, ...]) and 1 ([batch, seq, ...]), GRU's linear_before_reset both ways.
// Only the default activations (Sigmoid, Tanh, Tanh) are supported; input_forget must be 0.
//
// LSTM (gate order i, o, f, c in W, R, B; P is i, o, f):
//   i = sigmoid(x Wi' + h Ri' + Wbi + Rbi + Pi . c)   f = sigmoid(x Wf' + h Rf' + Wbf + Rbf + Pf . c)
//   g = tanh(x Wc' + h Rc' + Wbc + Rbc)               c' = f . c + i . g
//   o = sigmoid(x Wo' + h Ro' + Wbo + Rbo + Po . c')  h' = o . tanh(c')
// GRU (gate order z, r, h):
//   z = sigmoid(x Wz' + h Rz' + Wbz + Rbz)            r = sigmoid(x Wr' + h Rr' + Wbr + Rbr)
//   n = tanh(x Wh' + (r . h) Rh' + Rbh + Wbh)  or, linear_before_reset: tanh(x Wh' + r . (h Rh' + Rbh) + Wbh)
//   h' = (1 - z) . n + z . h
// PyTorch's nn.LSTM / nn.GRU export to exactly these (GRU with linear_before_reset = 1).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterRnnOps(OpRegistry& registry);

}  // namespace octet::float_ops
