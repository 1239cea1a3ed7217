// Conv backward: im2col / col2im around two GEMMs per image and group.
#include "ops/float/grad/conv_backward.h"

#include <algorithm>
#include <vector>

#include "ops/float/op_util.h"
#include "ops/float/sgemm.h"

namespace octet::float_ops {
namespace {

struct ConvGeometry {
  int64_t n = 0, c = 0, h = 1, w = 0, oc = 0, oh = 1, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pad_top = 0, pad_left = 0;
  int64_t groups = 1;
};

Result<ConvGeometry> ReadGeometry(const BackwardArgs& args) {
  const Shape& x = args.inputs[0].shape();
  const Shape& wt = args.inputs[1].shape();
  const Shape& y = args.outputs[0].shape();
  if ((x.rank() != 3 && x.rank() != 4) || wt.rank() != x.rank() || y.rank() != x.rank()) {
    return InvalidArgument("Conv backward needs 1-D or 2-D convolution, got X {} and W {}", x, wt);
  }
  const size_t nd = static_cast<size_t>(x.rank() - 2);
  const AttributeMap& at = args.node.attributes;
  const std::vector<int64_t> kernel(wt.dims().begin() + 2, wt.dims().end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads_attr, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(std::string auto_pad, at.GetString("auto_pad", "NOTSET"));
  OCTET_ASSIGN_OR_RETURN(int64_t group, at.GetInt("group", 1));
  const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ResolvePads(auto_pad, pads_attr, in, kernel, strides, dilations));
  ConvGeometry g;
  g.n = x.dim(0), g.c = x.dim(1), g.oc = wt.dim(0), g.groups = group;
  if (group <= 0 || g.c % group != 0 || g.oc % group != 0 || wt.dim(1) != g.c / group) {
    return InvalidArgument("group {} does not fit X {} and W {}", group, x, wt);
  }
  if (nd == 1) {
    g.w = x.dim(2), g.kw = kernel[0], g.sw = strides[0], g.dw = dilations[0], g.pad_left = pads[0];
    g.ow = y.dim(2);
  } else {
    g.h = x.dim(2), g.w = x.dim(3), g.kh = kernel[0], g.kw = kernel[1];
    g.sh = strides[0], g.sw = strides[1], g.dh = dilations[0], g.dw = dilations[1];
    g.pad_top = pads[0], g.pad_left = pads[1];
    g.oh = y.dim(2), g.ow = y.dim(3);
  }
  return g;
}

// col[(ci * kh + i) * kw + j][oy * ow + ox] = x[ci][oy * sh - pt + i * dh][ox * sw - pl + j * dw] (0 outside).
void Im2Col(const ConvGeometry& g, int64_t channels, const float* x, float* col) {
  const int64_t ohw = g.oh * g.ow;
  for (int64_t ci = 0; ci < channels; ++ci) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        float* row = col + ((ci * g.kh + i) * g.kw + j) * ohw;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t iy = oy * g.sh - g.pad_top + i * g.dh;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t ix = ox * g.sw - g.pad_left + j * g.dw;
            const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
            row[oy * g.ow + ox] = inside ? x[(ci * g.h + iy) * g.w + ix] : 0.0f;
          }
        }
      }
    }
  }
}

// The adjoint of Im2Col: dx[...] += col[...].
void Col2Im(const ConvGeometry& g, int64_t channels, const float* col, float* dx) {
  const int64_t ohw = g.oh * g.ow;
  for (int64_t ci = 0; ci < channels; ++ci) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        const float* row = col + ((ci * g.kh + i) * g.kw + j) * ohw;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t iy = oy * g.sh - g.pad_top + i * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t ix = ox * g.sw - g.pad_left + j * g.dw;
            if (ix >= 0 && ix < g.w) dx[(ci * g.h + iy) * g.w + ix] += row[oy * g.ow + ox];
          }
        }
      }
    }
  }
}

Result<std::vector<Tensor>> ConvBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  if (args.inputs.size() < 2) return InvalidArgument("Conv needs X and W");
  OCTET_ASSIGN_OR_RETURN(ConvGeometry g, ReadGeometry(args));
  OCTET_ASSIGN_OR_RETURN(Tensor dy_t, OutputGrad(args, 0));
  const float* dy = dy_t.data<float>();
  const float* x = args.inputs[0].data<float>();
  const float* wt = args.inputs[1].data<float>();
  const int64_t cg = g.c / g.groups, ocg = g.oc / g.groups;
  const int64_t kdim = cg * g.kh * g.kw, ohw = g.oh * g.ow, hw = g.h * g.w;
  const bool want_x = NeedsGrad(args, 0), want_w = NeedsGrad(args, 1);
  Tensor dx, dw;
  if (want_x) {
    OCTET_ASSIGN_OR_RETURN(dx, Tensor::Create(DType::kF32, args.inputs[0].shape()));
  }
  if (want_w) {
    OCTET_ASSIGN_OR_RETURN(dw, Tensor::Create(DType::kF32, args.inputs[1].shape()));
  }
  std::vector<float> col(static_cast<size_t>(kdim * ohw));
  const SgemmBlockFn sgemm = SelectSgemm(args.context).fn;
  for (int64_t n = 0; n < g.n && (want_x || want_w); ++n) {
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const float* dy_g = dy + (n * g.oc + gi * ocg) * ohw;
      if (want_w) {
        Im2Col(g, cg, x + (n * g.c + gi * cg) * hw, col.data());
        SgemmArgs s;  // dW_g[ocg, K] += dY_g[ocg, ohw] col^T
        s.m = ocg, s.n = kdim, s.k = ohw;
        s.a = dy_g, s.lda = ohw;
        s.b = col.data(), s.ldb = ohw, s.trans_b = true;
        s.c = dw.data<float>() + gi * ocg * kdim, s.ldc = kdim;
        s.accumulate = true;
        Sgemm(args.context, sgemm, s);
      }
      if (want_x) {
        SgemmArgs s;  // dcol[K, ohw] = W_g^T dY_g
        s.m = kdim, s.n = ohw, s.k = ocg;
        s.a = wt + gi * ocg * kdim, s.lda = kdim, s.trans_a = true;
        s.b = dy_g, s.ldb = ohw;
        s.c = col.data(), s.ldc = ohw;
        Sgemm(args.context, sgemm, s);
        Col2Im(g, cg, col.data(), dx.data<float>() + (n * g.c + gi * cg) * hw);
      }
    }
  }
  if (want_x) grads[0] = std::move(dx);
  if (want_w) grads[1] = std::move(dw);
  if (NeedsGrad(args, 2) && args.inputs[2].NumElements() == g.oc) {
    OCTET_ASSIGN_OR_RETURN(Tensor db, Tensor::Create(DType::kF32, Shape{g.oc}));
    for (int64_t o = 0; o < g.oc; ++o) {
      double sum = 0.0;
      for (int64_t n = 0; n < g.n; ++n) {
        const float* p = dy + (n * g.oc + o) * ohw;
        for (int64_t i = 0; i < ohw; ++i) sum += p[i];
      }
      db.data<float>()[o] = static_cast<float>(sum);
    }
    grads[2] = std::move(db);
  }
  return grads;
}

}  // namespace

Status RegisterConvBackward(BackwardRegistry& registry) { return registry.Register(FloatOp::kConv, ConvBackward); }

}  // namespace octet::float_ops
