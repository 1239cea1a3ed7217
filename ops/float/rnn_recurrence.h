// The ONNX LSTM / GRU recurrence shared by the float operators (ops/float/rnn.h, where the equations are) and the
// dynamic int8 ones (ops/int8/dynamic_rnn_op.h): validation of the node, and the run over directions and steps,
// with the matrix products behind an interface so that each operator brings its own GEMM (float or dynamic int8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/op_registry.h"
#include "core/status.h"
#include "ops/float/ukernels/lstm_gates.h"

namespace octet::float_ops {

struct RnnParams {
  bool lstm = true;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  int64_t gates = 4;
  bool reverse_only = false;  // direction "reverse"
  int layout = 0;
  float clip = 0.0f;  // 0: no clip
  bool linear_before_reset = false;
  bool has_bias = false, has_lens = false, has_h0 = false, has_c0 = false, has_peephole = false;
  // Optional (the float LSTM sets it): the LSTM cell kernel for steps without clip and peepholes; null runs the
  // recurrence's own scalar loop (the dynamic int8 operators, bit-identical across ISAs).
  LstmGatesFn lstm_gates = nullptr;
};

// Validates an LSTM (lstm) or GRU node with ONNX's inputs, W and R of dtype `weight_dtype` (f32 for the float
// operators, s8 for the dynamic ones; every other input as ONNX), and fills the parameters and the output infos.
Result<RnnParams> PrepareRnnParams(const OpPrepareArgs& args, bool lstm, DType weight_dtype,
                                   std::vector<OutputInfo>* outputs);

// The products of one run. Project computes c[i][j] = sum_p a[i][p] * M[row0 + j][p] for i < m, j < n, where M is
// direction d's W ([G * H, input], recurrent false) or R ([G * H, H], recurrent true); a holds m contiguous rows
// (of `input` or H floats), c rows are ldc floats apart. The recurrence asks for: W whole (row0 0, n = G * H) on all
// seq * batch rows of X at once; per step R whole (LSTM, GRU with linear_before_reset), or GRU's R rows [0, 2H) on
// h and then rows [2H, 3H) on r . h.
class RnnProjections {
 public:
  virtual ~RnnProjections() = default;
  virtual Status Project(int64_t d, bool recurrent, int64_t row0, int64_t n, const float* a, int64_t m, float* c,
                         int64_t ldc) const = 0;
};

// Floats of scratch RunRnn needs.
size_t RnnScratchFloats(const RnnParams& p);

// Runs the recurrence (ops/float/rnn.h) on the node's inputs 0 and 3-7 and writes its outputs; W and R are only
// read through `projections`. scratch: RnnScratchFloats(p) floats.
Status RunRnn(const RnnParams& p, const OpRunArgs& r, float* scratch, const RnnProjections& projections);

}  // namespace octet::float_ops
