// The backward (vector-Jacobian product) of float operators, for training: one BackwardFn per ONNX op type, kept
// in a BackwardRegistry built on request (no static registration), beside the forward registry of ops/float.
//
// A backward function sees the node, its forward inputs and outputs (as the forward computed them) and dL/dY for
// each output, and returns dL/dX for each input slot that needs one. Functions recompute what they need (a max
// pool's argmax, batch statistics, an LSTM's gates) from the forward tensors instead of sharing hidden state with
// the forward kernels, so any forward result can be differentiated.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.h"
#include "core/float_op_table.h"
#include "core/graph.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::float_ops {

struct BackwardArgs {
  const Node& node;
  std::span<const Tensor> inputs;        // forward inputs, one per slot (an empty f32 [0] tensor when omitted)
  std::span<const Tensor> outputs;       // forward outputs, one per slot
  std::span<const Tensor> output_grads;  // dL/dY per output slot, each of its output's shape; empty = zero
  std::span<const bool> needs_grad;      // per input slot: compute dL/dX for it
  bool training = false;                 // the forward ran in training mode (BatchNormalization: batch statistics)
  const Context& context;
};

// Returns one tensor per input slot: dL/dX of the input's shape where needs_grad is set, an empty Tensor elsewhere.
using BackwardFn = std::function<Result<std::vector<Tensor>>(const BackwardArgs& args)>;

class BackwardRegistry {
 public:
  // Fails if op is already registered (ONNX's default domain only: float operators, by id).
  Status Register(FloatOp op, BackwardFn fn);
  // The backward of op_type, or nullptr.
  const BackwardFn* Find(std::string_view op_type) const;
  std::vector<std::string> OpTypes() const;

 private:
  std::map<std::string, BackwardFn, std::less<>> fns_;
};

// Every backward of ops/float/grad.
BackwardRegistry FloatBackwardRegistry();

// --- helpers shared by the backward files ---

// dL/dY of output `slot`, or a zero tensor of the output's shape when the caller gave none.
Result<Tensor> OutputGrad(const BackwardArgs& args, size_t slot);
// Sums `grad` (of shape `from`, the broadcast result) down to `to` (a shape that numpy-broadcasts to `from`):
// the gradient of an operand that was broadcast. Accumulates in double.
Result<Tensor> ReduceToShape(const Tensor& grad, const Shape& to);
// A vector of empty tensors, one per input slot (what a backward fills in).
std::vector<Tensor> EmptyGrads(const BackwardArgs& args);
bool NeedsGrad(const BackwardArgs& args, size_t slot);

}  // namespace octet::float_ops
