// BackwardRegistry and the helpers every backward file shares.
#include "ops/float/grad/backward.h"

#include <algorithm>

#include "ops/float/grad/activation_backward.h"
#include "ops/float/grad/batch_norm_backward.h"
#include "ops/float/grad/binary_backward.h"
#include "ops/float/grad/conv_backward.h"
#include "ops/float/grad/gather_backward.h"
#include "ops/float/grad/gemm_backward.h"
#include "ops/float/grad/lstm_backward.h"
#include "ops/float/grad/pool_backward.h"
#include "ops/float/grad/shape_backward.h"
#include "ops/float/op_util.h"

namespace octet::float_ops {

Status BackwardRegistry::Register(FloatOp op, BackwardFn fn) {
  auto [it, inserted] = fns_.emplace(std::string(FloatOpName(op)), std::move(fn));
  if (!inserted) return InvalidArgument("backward of '{}' is already registered", FloatOpName(op));
  return OkStatus();
}

const BackwardFn* BackwardRegistry::Find(std::string_view op_type) const {
  auto it = fns_.find(op_type);
  return it == fns_.end() ? nullptr : &it->second;
}

std::vector<std::string> BackwardRegistry::OpTypes() const {
  std::vector<std::string> names;
  for (const auto& [name, fn] : fns_) names.push_back(name);
  return names;
}

BackwardRegistry FloatBackwardRegistry() {
  BackwardRegistry registry;
  for (auto add : {RegisterActivationBackward, RegisterBatchNormBackward, RegisterBinaryBackward,
                   RegisterConvBackward, RegisterGatherBackward, RegisterGemmBackward, RegisterLstmBackward, RegisterPoolBackward,
                   RegisterShapeBackward}) {
    const Status status = add(registry);
    OCTET_CHECK(status.ok());  // the list above registers each op type once
  }
  return registry;
}

Result<Tensor> OutputGrad(const BackwardArgs& args, size_t slot) {
  const Tensor& y = args.outputs[slot];
  if (slot < args.output_grads.size() && args.output_grads[slot].NumElements() == y.NumElements() &&
      args.output_grads[slot].shape() == y.shape()) {
    return args.output_grads[slot];
  }
  return Tensor::Create(DType::kF32, y.shape());
}

Result<Tensor> ReduceToShape(const Tensor& grad, const Shape& to) {
  if (grad.shape() == to) return grad.Clone();
  const Shape& from = grad.shape();
  if (to.rank() > from.rank()) return InvalidArgument("cannot reduce a gradient of shape {} to {}", from, to);
  const std::vector<int64_t> strides = BroadcastStrides(to, from);
  std::vector<double> acc(static_cast<size_t>(to.NumElements()), 0.0);
  const float* g = grad.data<float>();
  const int rank = from.rank();
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < from.NumElements(); ++i) {
    acc[static_cast<size_t>(offset)] += g[i];
    // Odometer increment of the output index, keeping the operand offset in step.
    for (int d = rank - 1; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      if (++index[ud] < from.dim(d)) {
        offset += strides[ud];
        break;
      }
      offset -= strides[ud] * (from.dim(d) - 1);
      index[ud] = 0;
    }
  }
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(DType::kF32, to));
  std::transform(acc.begin(), acc.end(), out.data<float>(), [](double v) { return static_cast<float>(v); });
  return out;
}

std::vector<Tensor> EmptyGrads(const BackwardArgs& args) { return std::vector<Tensor>(args.inputs.size()); }

bool NeedsGrad(const BackwardArgs& args, size_t slot) {
  return slot < args.needs_grad.size() && args.needs_grad[slot] && slot < args.inputs.size();
}

}  // namespace octet::float_ops
