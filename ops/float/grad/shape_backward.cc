// Concat and reshape-like backward.
#include "ops/float/grad/shape_backward.h"

#include <cstring>

#include "ops/float/op_util.h"

namespace octet::float_ops {
namespace {

// dX = dY seen with X's shape (the element order of a reshape is the identity).
Result<std::vector<Tensor>> ViewBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  if (!NeedsGrad(args, 0)) return grads;
  OCTET_ASSIGN_OR_RETURN(Tensor dy, OutputGrad(args, 0));
  OCTET_ASSIGN_OR_RETURN(Tensor copy, dy.Clone());
  OCTET_ASSIGN_OR_RETURN(grads[0], copy.Reshaped(args.inputs[0].shape()));
  return grads;
}

Result<std::vector<Tensor>> ConcatBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  OCTET_ASSIGN_OR_RETURN(Tensor dy, OutputGrad(args, 0));
  const Shape& out = dy.shape();
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, args.node.attributes.GetInt("axis"));
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, out.rank()));
  const int64_t outer = out.Product(0, axis), inner = out.Product(axis + 1, out.rank());
  const int64_t out_row = out.dim(axis) * inner;
  int64_t begin = 0;  // offset along the axis, in elements of one row
  for (size_t slot = 0; slot < args.inputs.size(); ++slot) {
    const Shape& in = args.inputs[slot].shape();
    const int64_t row = in.rank() == out.rank() ? in.dim(axis) * inner : 0;
    if (NeedsGrad(args, slot)) {
      OCTET_ASSIGN_OR_RETURN(Tensor dx, Tensor::Create(DType::kF32, in));
      for (int64_t o = 0; o < outer && row > 0; ++o) {
        std::memcpy(dx.data<float>() + o * row, dy.data<float>() + o * out_row + begin,
                    static_cast<size_t>(row) * sizeof(float));
      }
      grads[slot] = std::move(dx);
    }
    begin += row;
  }
  return grads;
}

}  // namespace

Status RegisterShapeBackward(BackwardRegistry& registry) {
  for (FloatOp op : {FloatOp::kFlatten, FloatOp::kReshape, FloatOp::kSqueeze, FloatOp::kUnsqueeze, FloatOp::kIdentity,
                     FloatOp::kDropout}) {
    OCTET_RETURN_IF_ERROR(registry.Register(op, ViewBackward));
  }
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kConcat, ConcatBackward));
  return OkStatus();
}

}  // namespace octet::float_ops
