// Pooling backward.
#include "ops/float/grad/pool_backward.h"

#include <algorithm>
#include <vector>

#include "ops/float/op_util.h"

namespace octet::float_ops {
namespace {

struct PoolBackwardGeometry {
  int64_t planes = 0, h = 1, w = 0, oh = 1, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool count_include_pad = false;
};

Result<PoolBackwardGeometry> ReadPoolBackwardGeometry(const BackwardArgs& args) {
  const Shape& x = args.inputs[0].shape();
  const Shape& y = args.outputs[0].shape();
  if ((x.rank() != 3 && x.rank() != 4) || y.rank() != x.rank()) {
    return InvalidArgument("pooling backward needs X [N, C, W] or [N, C, H, W], got {}", x);
  }
  const size_t nd = static_cast<size_t>(x.rank() - 2);
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, at.GetInts("kernel_shape"));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads_attr, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(std::string auto_pad, at.GetString("auto_pad", "NOTSET"));
  OCTET_ASSIGN_OR_RETURN(int64_t count_include_pad, at.GetInt("count_include_pad", 0));
  if (kernel.size() != nd || strides.size() != nd || dilations.size() != nd) {
    return InvalidArgument("kernel_shape, strides and dilations must have {} values", nd);
  }
  const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ResolvePads(auto_pad, pads_attr, in, kernel, strides, dilations));
  PoolBackwardGeometry g;
  g.planes = x.dim(0) * x.dim(1);
  g.count_include_pad = count_include_pad != 0;
  if (nd == 1) {
    g.w = x.dim(2), g.kw = kernel[0], g.sw = strides[0], g.dw = dilations[0];
    g.pad_left = pads[0], g.pad_right = pads[1], g.ow = y.dim(2);
  } else {
    g.h = x.dim(2), g.w = x.dim(3), g.kh = kernel[0], g.kw = kernel[1], g.sh = strides[0], g.sw = strides[1];
    g.dh = dilations[0], g.dw = dilations[1];
    g.pad_top = pads[0], g.pad_left = pads[1], g.pad_bottom = pads[2], g.pad_right = pads[3];
    g.oh = y.dim(2), g.ow = y.dim(3);
  }
  return g;
}

template <bool kMax>
Result<std::vector<Tensor>> PoolBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  if (!NeedsGrad(args, 0)) return grads;
  OCTET_ASSIGN_OR_RETURN(PoolBackwardGeometry g, ReadPoolBackwardGeometry(args));
  OCTET_ASSIGN_OR_RETURN(Tensor dy_t, OutputGrad(args, 0));
  OCTET_ASSIGN_OR_RETURN(Tensor dx_t, Tensor::Create(DType::kF32, args.inputs[0].shape()));
  const float* x = args.inputs[0].data<float>();
  const float* dy = dy_t.data<float>();
  float* dx = dx_t.data<float>();
  for (int64_t p = 0; p < g.planes; ++p) {
    const float* xp = x + p * g.h * g.w;
    float* dxp = dx + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t y0 = oy * g.sh - g.pad_top;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t x0 = ox * g.sw - g.pad_left;
        const float grad = dy[(p * g.oh + oy) * g.ow + ox];
        if constexpr (kMax) {
          int64_t best = -1;
          for (int64_t i = 0; i < g.kh; ++i) {
            const int64_t iy = y0 + i * g.dh;
            if (iy < 0 || iy >= g.h) continue;
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t ix = x0 + j * g.dw;
              if (ix < 0 || ix >= g.w) continue;
              const int64_t e = iy * g.w + ix;
              if (best < 0 || xp[e] > xp[best] || xp[e] != xp[e]) best = e;
              if (xp[e] != xp[e]) break;
            }
          }
          if (best >= 0) dxp[best] += grad;
        } else {
          const int64_t y1 = std::min(y0 + g.kh, g.h + g.pad_bottom), x1 = std::min(x0 + g.kw, g.w + g.pad_right);
          const int64_t ylo = std::max<int64_t>(y0, 0), yhi = std::min(y0 + g.kh, g.h);
          const int64_t xlo = std::max<int64_t>(x0, 0), xhi = std::min(x0 + g.kw, g.w);
          const int64_t count = g.count_include_pad ? (y1 - y0) * (x1 - x0) : (yhi - ylo) * (xhi - xlo);
          if (count <= 0) continue;
          const float share = grad / static_cast<float>(count);
          for (int64_t iy = ylo; iy < yhi; ++iy) {
            for (int64_t ix = xlo; ix < xhi; ++ix) dxp[iy * g.w + ix] += share;
          }
        }
      }
    }
  }
  grads[0] = std::move(dx_t);
  return grads;
}

Result<std::vector<Tensor>> GlobalAveragePoolBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  if (!NeedsGrad(args, 0)) return grads;
  const Shape& x = args.inputs[0].shape();
  if (x.rank() < 3) return InvalidArgument("X must be [N, C, spatial...], got {}", x);
  const int64_t planes = x.dim(0) * x.dim(1), spatial = x.Product(2, x.rank());
  OCTET_ASSIGN_OR_RETURN(Tensor dy, OutputGrad(args, 0));
  OCTET_ASSIGN_OR_RETURN(Tensor dx, Tensor::Create(DType::kF32, x));
  for (int64_t p = 0; p < planes; ++p) {
    const float share = dy.data<float>()[p] / static_cast<float>(spatial);
    std::fill(dx.data<float>() + p * spatial, dx.data<float>() + (p + 1) * spatial, share);
  }
  grads[0] = std::move(dx);
  return grads;
}

}  // namespace

Status RegisterPoolBackward(BackwardRegistry& registry) {
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kMaxPool, PoolBackward<true>));
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kAveragePool, PoolBackward<false>));
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kGlobalAveragePool, GlobalAveragePoolBackward));
  return OkStatus();
}

}  // namespace octet::float_ops
