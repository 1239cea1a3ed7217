// Add, Sub, Mul, Div backward with numpy broadcasting.
#include "ops/float/grad/binary_backward.h"

#include "ops/float/op_util.h"

namespace octet::float_ops {
namespace {

enum class BinaryOp { kAdd, kSub, kMul, kDiv };

// The other operand broadcast to the output shape (a full copy, so the products below index one layout).
Result<Tensor> Broadcast(const Tensor& t, const Shape& to) {
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(DType::kF32, to));
  const std::vector<int64_t> strides = BroadcastStrides(t.shape(), to);
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  const int rank = to.rank();
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < to.NumElements(); ++i) {
    dst[i] = src[offset];
    for (int d = rank - 1; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      if (++index[ud] < to.dim(d)) {
        offset += strides[ud];
        break;
      }
      offset -= strides[ud] * (to.dim(d) - 1);
      index[ud] = 0;
    }
  }
  return out;
}

BackwardFn Binary(BinaryOp op) {
  return [op](const BackwardArgs& args) -> Result<std::vector<Tensor>> {
    std::vector<Tensor> grads = EmptyGrads(args);
    OCTET_ASSIGN_OR_RETURN(Tensor dy, OutputGrad(args, 0));
    const Shape& out = dy.shape();
    const int64_t count = out.NumElements();
    const float* g = dy.data<float>();
    for (size_t slot = 0; slot < 2; ++slot) {
      if (!NeedsGrad(args, slot)) continue;
      OCTET_ASSIGN_OR_RETURN(Tensor full, Tensor::Create(DType::kF32, out));
      float* f = full.data<float>();
      const bool second = slot == 1;
      if (op == BinaryOp::kAdd || (op == BinaryOp::kSub && !second)) {
        std::copy(g, g + count, f);
      } else if (op == BinaryOp::kSub) {
        for (int64_t i = 0; i < count; ++i) f[i] = -g[i];
      } else {
        OCTET_ASSIGN_OR_RETURN(Tensor a, Broadcast(args.inputs[0], out));
        OCTET_ASSIGN_OR_RETURN(Tensor b, Broadcast(args.inputs[1], out));
        const float* pa = a.data<float>();
        const float* pb = b.data<float>();
        if (op == BinaryOp::kMul) {
          for (int64_t i = 0; i < count; ++i) f[i] = g[i] * (second ? pa[i] : pb[i]);
        } else if (!second) {  // d(a / b)/da = 1 / b
          for (int64_t i = 0; i < count; ++i) f[i] = g[i] / pb[i];
        } else {  // d(a / b)/db = -a / b^2
          for (int64_t i = 0; i < count; ++i) f[i] = -g[i] * pa[i] / (pb[i] * pb[i]);
        }
      }
      OCTET_ASSIGN_OR_RETURN(grads[slot], ReduceToShape(full, args.inputs[slot].shape()));
    }
    return grads;
  };
}

}  // namespace

Status RegisterBinaryBackward(BackwardRegistry& registry) {
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kAdd, Binary(BinaryOp::kAdd)));
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kSub, Binary(BinaryOp::kSub)));
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kMul, Binary(BinaryOp::kMul)));
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kDiv, Binary(BinaryOp::kDiv)));
  return OkStatus();
}

}  // namespace octet::float_ops
