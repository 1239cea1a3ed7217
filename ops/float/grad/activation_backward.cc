// Element-wise activation and Softmax backward.
#include "ops/float/grad/activation_backward.h"

#include <cmath>
#include <limits>

#include "ops/float/op_util.h"

namespace octet::float_ops {
namespace {

// dX = dY * f'(x, y) element by element; `derivative` sees the forward input and output.
template <typename F>
BackwardFn Elementwise(F derivative) {
  return [derivative](const BackwardArgs& args) -> Result<std::vector<Tensor>> {
    std::vector<Tensor> grads = EmptyGrads(args);
    if (!NeedsGrad(args, 0)) return grads;
    OCTET_ASSIGN_OR_RETURN(Tensor dy, OutputGrad(args, 0));
    OCTET_ASSIGN_OR_RETURN(Tensor dx, Tensor::Create(DType::kF32, args.inputs[0].shape()));
    const float* x = args.inputs[0].data<float>();
    const float* y = args.outputs[0].data<float>();
    const float* g = dy.data<float>();
    float* out = dx.data<float>();
    for (int64_t i = 0; i < dx.NumElements(); ++i) out[i] = g[i] * derivative(x[i], y[i]);
    grads[0] = std::move(dx);
    return grads;
  };
}

// A scalar bound of Clip (input 1 or 2), or `fallback` when the input is omitted.
float ClipBound(const BackwardArgs& args, size_t slot, float fallback) {
  if (slot >= args.inputs.size() || args.inputs[slot].NumElements() != 1) return fallback;
  return args.inputs[slot].data<float>()[0];
}

Result<std::vector<Tensor>> ClipBackward(const BackwardArgs& args) {
  const float lo = ClipBound(args, 1, -std::numeric_limits<float>::infinity());
  const float hi = ClipBound(args, 2, std::numeric_limits<float>::infinity());
  // hardtanh_backward: the gradient passes strictly inside (min, max); an infinite bound never stops it.
  return Elementwise([lo, hi](float x, float) {
    const bool above = std::isinf(lo) || x > lo;
    const bool below = std::isinf(hi) || x < hi;
    return above && below ? 1.0f : 0.0f;
  })(args);
}

// Softmax along `axis` (opset 13: one axis): dX = Y * (dY - sum(dY * Y)) along the axis.
Result<std::vector<Tensor>> SoftmaxBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  if (!NeedsGrad(args, 0)) return grads;
  const Shape& shape = args.inputs[0].shape();
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, args.node.attributes.GetInt("axis", -1));
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, shape.rank()));
  const int64_t outer = shape.Product(0, axis), len = shape.dim(axis), inner = shape.Product(axis + 1, shape.rank());
  OCTET_ASSIGN_OR_RETURN(Tensor dy, OutputGrad(args, 0));
  OCTET_ASSIGN_OR_RETURN(Tensor dx, Tensor::Create(DType::kF32, shape));
  const float* y = args.outputs[0].data<float>();
  const float* g = dy.data<float>();
  float* out = dx.data<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      double dot = 0.0;
      for (int64_t t = 0; t < len; ++t) dot += static_cast<double>(g[base + t * inner]) * y[base + t * inner];
      for (int64_t t = 0; t < len; ++t) {
        const int64_t e = base + t * inner;
        out[e] = static_cast<float>(y[e] * (g[e] - dot));
      }
    }
  }
  grads[0] = std::move(dx);
  return grads;
}

}  // namespace

Status RegisterActivationBackward(BackwardRegistry& registry) {
  // threshold_backward: no gradient at x <= 0.
  OCTET_RETURN_IF_ERROR(
      registry.Register(FloatOp::kRelu, Elementwise([](float x, float) { return x > 0.0f ? 1.0f : 0.0f; })));
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kClip, ClipBackward));
  // hardswish_backward: 0 below -3, x / 3 + 1/2 on [-3, 3], 1 above.
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kHardSwish, Elementwise([](float x, float) {
    if (x < -3.0f) return 0.0f;
    if (x <= 3.0f) return x / 3.0f + 0.5f;
    return 1.0f;
  })));
  OCTET_RETURN_IF_ERROR(
      registry.Register(FloatOp::kSigmoid, Elementwise([](float, float y) { return y * (1.0f - y); })));
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kTanh, Elementwise([](float, float y) { return 1.0f - y * y; })));
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kSoftmax, SoftmaxBackward));
  return OkStatus();
}

}  // namespace octet::float_ops
