// Gather backward: dData[o, k, :] += dY[o, i, :] for every index i with (normalised) value k, in index order.
#include "ops/float/grad/gather_backward.h"

#include "ops/float/op_util.h"

namespace octet::float_ops {
namespace {

Result<std::vector<Tensor>> GatherBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  if (!NeedsGrad(args, 0)) return grads;
  const Tensor& data = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  if (data.dtype() != DType::kF32 || indices.dtype() != DType::kS32) {
    return InvalidArgument("Gather backward needs f32 data and s32 indices, got {} and {}", data.dtype(),
                           indices.dtype());
  }
  OCTET_ASSIGN_OR_RETURN(Tensor dy, OutputGrad(args, 0));
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, args.node.attributes.GetInt("axis", 0));
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, data.shape().rank()));
  const int64_t outer = data.shape().Product(0, axis);
  const int64_t dim = data.shape().dim(axis);
  const int64_t inner = data.shape().Product(axis + 1, data.shape().rank());
  const int64_t count = indices.NumElements();
  if (dy.NumElements() != outer * count * inner) {
    return InvalidArgument("Gather backward: dY has shape {}, which does not match data {} and indices {}",
                           dy.shape(), data.shape(), indices.shape());
  }
  OCTET_ASSIGN_OR_RETURN(Tensor dx, Tensor::Create(DType::kF32, data.shape()));
  const int32_t* idx = indices.data<int32_t>();
  for (int64_t i = 0; i < count; ++i) {
    if (idx[i] < -dim || idx[i] >= dim) {
      return OutOfRange("Gather backward: index {} (element {} of the indices) is out of range [{}, {})", idx[i], i,
                        -dim, dim);
    }
  }
  const float* g = dy.data<float>();
  float* d = dx.data<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < count; ++i) {
      const int64_t k = idx[i] < 0 ? idx[i] + dim : idx[i];
      const float* src = g + (o * count + i) * inner;
      float* dst = d + (o * dim + k) * inner;
      for (int64_t j = 0; j < inner; ++j) dst[j] += src[j];
    }
  }
  grads[0] = std::move(dx);
  return grads;
}

}  // namespace

Status RegisterGatherBackward(BackwardRegistry& registry) {
  return registry.Register(FloatOp::kGather, GatherBackward);
}

}  // namespace octet::float_ops
