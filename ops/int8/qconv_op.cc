// QConv: ONNX attributes and qparams validated, weights converted to OHWI and planned at Prepare; per call, NCHW
// to NHWC, the plan, and back (either transpose skipped where the layout pass keeps that side NHWC).
#include "ops/int8/qconv_op.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/int8/int8_ops.h"
#include "ops/int8/linear_output.h"
#include "ops/int8/nhwc_layout.h"
#include "ops/qconv2d.h"
#include "ops/reference/qconv_op_reference.h"
#include "ops/ukernels/transpose.h"

namespace octet::int8_ops {
namespace {

using float_ops::CheckArity;
using float_ops::MakePrepared;

// The NHWC staging of one call: x is staged as [n][hp][wp][c], y computed as [n][oh][ow][m].
//   explicit_pads: asymmetric pads are written into the staged input with the zero point (hp = h + pt + pb, wp
//                  likewise), and the plan pads nothing;
//   subsample:     a 1x1 kernel with stride > 1 and no padding reads only every stride-th pixel, so only those are
//                  staged (hp = oh, wp = ow) and the plan runs as a 1x1 convolution with stride 1 (no im2col).
struct ConvLayout {
  int64_t n = 0, c = 0, h = 1, w = 0;
  int64_t m = 0, oh = 1, ow = 0;
  int64_t hp = 1, wp = 0, pad_top = 0, pad_left = 0;
  bool explicit_pads = false;
  int64_t sub_h = 1, sub_w = 1;  // subsampling steps (1 = every pixel)
  uint8_t zero_byte = 0;         // the input zero point as stored
  bool nhwc_x = false;           // x arrives [n][h][w][c] (ops/int8/nhwc_layout.h)
  bool nhwc_y = false;           // y leaves [n][oh][ow][m]
  bool stage_x = true;           // x is copied into the scratch (false: an NHWC x the plan reads in place)
  size_t x_bytes = 0;            // staged sizes, rounded up to the 64-byte alignment with Tensor's padding
  size_t y_bytes = 0;
};

// Rows (image rows, pixel runs) per parallel tile: ~16 KiB of data each, from the shape alone.
int64_t RowsPerTile(int64_t row_bytes) {
  return std::max<int64_t>(1, (int64_t{16} << 10) / std::max<int64_t>(1, row_bytes));
}

constexpr size_t kAlign = 64;
size_t StagedBytes(int64_t elements) {
  return (static_cast<size_t>(elements) + kTensorPaddingBytes + kAlign - 1) / kAlign * kAlign;
}

// Per image b < n of `channels` x `plane` bytes: [channels][plane] -> [plane][channels] (NCHW -> NHWC) or back,
// in tiles of pixel runs that are multiples of 16 and cross image rows, so 7x7 and 14x14 layers get whole SIMD blocks
// instead of 7- or 14-byte edges.
void TransposeImages(const Context& context, TransposeBytesUkernelFn transpose, int64_t n, int64_t channels,
                     int64_t plane, bool to_nhwc, const uint8_t* src, uint8_t* dst) {
  const int64_t image = channels * plane;
  const int64_t per_tile = std::max<int64_t>(16, RowsPerTile(channels) / 16 * 16);
  const int64_t tiles_per_image = (plane + per_tile - 1) / per_tile;
  const auto c = static_cast<size_t>(channels), hw = static_cast<size_t>(plane);
  ParallelFor(context, n * tiles_per_image, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / tiles_per_image, p0 = (t % tiles_per_image) * per_tile;
      const auto count = static_cast<size_t>(std::min(per_tile, plane - p0));
      if (to_nhwc) {
        transpose(src + b * image + p0, hw, 1, c, count, dst + b * image + p0 * channels, c);
      } else {
        transpose(src + b * image + p0 * channels, c, 1, count, c, dst + b * image + p0, hw);
      }
    }
  });
}

// x [n][h][w][c] -> staged [n][hp][wp][c] (padded or subsampled: an NHWC x with neither is read in place).
void StageNhwc(const Context& context, const ConvLayout& l, const uint8_t* x, uint8_t* staged) {
  if (l.explicit_pads) std::memset(staged, l.zero_byte, static_cast<size_t>(l.n * l.hp * l.wp * l.c));
  const bool subsample = l.sub_h > 1 || l.sub_w > 1;
  const int64_t rows = subsample ? l.hp : l.h, cols = subsample ? l.wp : l.w;
  const auto pixel = static_cast<size_t>(l.c);
  ParallelFor(context, l.n * rows, RowsPerTile(cols * l.c), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / rows, y = t % rows;
      const uint8_t* src = x + (b * l.h + y * l.sub_h) * l.w * l.c;
      uint8_t* dst = staged + ((b * l.hp + y + l.pad_top) * l.wp + l.pad_left) * l.c;
      if (l.sub_w == 1) {
        std::memcpy(dst, src, static_cast<size_t>(cols) * pixel);
      } else {
        for (int64_t i = 0; i < cols; ++i) std::memcpy(dst + i * l.c, src + i * l.sub_w * l.c, pixel);
      }
    }
  });
}

// x [n][c][h][w] -> staged [n][hp][wp][c].
void ToNhwc(const Context& context, TransposeBytesUkernelFn transpose, const ConvLayout& l, const uint8_t* x,
            uint8_t* staged) {
  const bool subsample = l.sub_h > 1 || l.sub_w > 1;
  if (l.nhwc_x) return StageNhwc(context, l, x, staged);
  if (!subsample && !l.explicit_pads) return TransposeImages(context, transpose, l.n, l.c, l.h * l.w, true, x, staged);
  // Padded or subsampled: one tile = whole (image, staged row) pairs.
  if (l.explicit_pads) std::memset(staged, l.zero_byte, static_cast<size_t>(l.n * l.hp * l.wp * l.c));
  const int64_t plane = l.h * l.w;
  const int64_t rows = subsample ? l.hp : l.h, cols = subsample ? l.wp : l.w;
  ParallelFor(context, l.n * rows, RowsPerTile(cols * l.c), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / rows, y = t % rows;
      const uint8_t* src = x + b * l.c * plane + y * l.sub_h * l.w;
      uint8_t* dst = staged + ((b * l.hp + y + l.pad_top) * l.wp + l.pad_left) * l.c;
      transpose(src, static_cast<size_t>(plane), static_cast<size_t>(l.sub_w), static_cast<size_t>(l.c),
                static_cast<size_t>(cols), dst, static_cast<size_t>(l.c));
    }
  });
}

// ONNX Conv's spatial attributes for `nd` spatial dims; kernel from the weight.
struct Spatial {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads [begin..., end...]
};

Result<Spatial> ReadSpatial(const AttributeMap& at, const Shape& x, const Shape& w) {
  const size_t nd = static_cast<size_t>(x.rank() - 2);
  Spatial s;
  s.kernel.assign(w.dims().begin() + 2, w.dims().end());
  OCTET_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel_attr, at.GetInts("kernel_shape", s.kernel));
  if (kernel_attr != s.kernel) {
    return InvalidArgument("attribute 'kernel_shape' [{}] does not match the weight's spatial dims [{}]",
                           fmt::join(kernel_attr, ", "), fmt::join(s.kernel, ", "));
  }
  OCTET_ASSIGN_OR_RETURN(s.strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(s.dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(const std::string auto_pad, at.GetString("auto_pad", "NOTSET"));
  if (s.strides.size() != nd || s.dilations.size() != nd) {
    return InvalidArgument("attributes 'strides' and 'dilations' must have {} values, got {} and {}", nd,
                           s.strides.size(), s.dilations.size());
  }
  for (size_t i = 0; i < nd; ++i) {
    if (s.strides[i] <= 0 || s.dilations[i] <= 0 || s.kernel[i] <= 0) {
      return InvalidArgument("kernel, strides and dilations must be positive, got [{}], [{}], [{}]",
                             fmt::join(s.kernel, ", "), fmt::join(s.strides, ", "), fmt::join(s.dilations, ", "));
    }
  }
  const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(s.pads,
                         float_ops::ResolvePads(auto_pad, std::move(pads), in, s.kernel, s.strides, s.dilations));
  return s;
}

// The weight [M, C/g, (kh,) kw] (OIHW) as the plan's OHWI tensor, with its qparams (axis 0 in both layouts).
Result<QTensor> ToOhwi(const Tensor& oihw, const QParams& qp, int64_t kh, int64_t kw) {
  const int64_t m = oihw.shape().dim(0), cg = oihw.shape().dim(1);
  OCTET_ASSIGN_OR_RETURN(Tensor ohwi, Tensor::Create(DType::kS8, Shape{m, kh, kw, cg}));
  const int8_t* src = oihw.data<int8_t>();
  int8_t* dst = ohwi.data<int8_t>();
  const int64_t taps = kh * kw;
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t i = 0; i < cg; ++i) {
      for (int64_t t = 0; t < taps; ++t) dst[(o * taps + t) * cg + i] = src[(o * cg + i) * taps + t];
    }
  }
  return QTensor::Create(std::move(ohwi), qp);
}

Result<PreparedOp> PrepareQConv(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 3));
  OCTET_ASSIGN_OR_RETURN(const QParams* x_qp, ActivationInputQParams(args, 0, "X"));
  OCTET_ASSIGN_OR_RETURN(const QParams* w_qp, ConstantWeightQParams(args, 1));
  OCTET_ASSIGN_OR_RETURN(const QParams* y_qp, ActivationOutputQParams(args));
  const Shape& x = args.inputs[0].shape;
  const Shape& w = args.inputs[1].shape;
  if (x.rank() != 3 && x.rank() != 4) {
    return InvalidArgument("input {} (X) must be [N, C, W] or [N, C, H, W], got {}", InputName(args, 0), x);
  }
  if (w.rank() != x.rank()) {
    return InvalidArgument("input {} (W) {} must have the rank of X {}", InputName(args, 1), w, x);
  }
  if (w_qp->per_channel() && w_qp->axis() != 0) {
    return InvalidArgument("input {} (W) must be per tensor or per channel on axis 0 (output channels), got axis {}",
                           InputName(args, 1), w_qp->axis());
  }
  if (w_qp->per_channel() && w_qp->num_channels() != w.dim(0)) {
    return InvalidArgument("input {} (W) has {} per-channel qparams for {} output channels", InputName(args, 1),
                           w_qp->num_channels(), w.dim(0));
  }
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(const int64_t group, at.GetInt("group", 1));
  const int64_t c = x.dim(1), m = w.dim(0);
  if (group <= 0 || c % group != 0 || m % group != 0) {
    return InvalidArgument(
        "attribute 'group' {} must be positive and divide the input channels {} and output "
        "channels {}",
        group, c, m);
  }
  if (w.dim(1) * group != c) {
    return InvalidArgument("input {} (W) {} expects {} input channels (group {}), X {} has {}", InputName(args, 1), w,
                           w.dim(1) * group, group, x, c);
  }
  OCTET_ASSIGN_OR_RETURN(const Spatial s, ReadSpatial(at, x, w));
  OCTET_ASSIGN_OR_RETURN(const int64_t nhwc_x, at.GetInt(kNhwcInputAttribute, 0));
  OCTET_ASSIGN_OR_RETURN(const int64_t nhwc_y, at.GetInt(kNhwcOutputAttribute, 0));
  if ((nhwc_x != 0 || nhwc_y != 0) && x.rank() != 4) {
    return InvalidArgument("attributes '{}' and '{}' (set by the NHWC layout pass) need a 2-D convolution, X is {}",
                           kNhwcInputAttribute, kNhwcOutputAttribute, x);
  }
  const bool one_d = x.rank() == 3;
  // The op-level spec's geometry: a 1-D convolution is the 2-D one of height 1.
  const reference::QConvOpGeometry g = reference::MakeQConvOpGeometry(x, w, s.strides, s.dilations, s.pads, group);

  ConvLayout l{.n = g.n, .c = c, .h = g.h, .w = g.w, .m = m};
  Conv2dParams p{.kernel_h = g.kh,
                 .kernel_w = g.kw,
                 .stride_h = g.stride_h,
                 .stride_w = g.stride_w,
                 .dilation_h = g.dilation_h,
                 .dilation_w = g.dilation_w,
                 .groups = group};
  const int64_t pt = g.pad_top, pb = g.pad_bottom, pl = g.pad_left, pr = g.pad_right;
  OCTET_ASSIGN_OR_RETURN(l.oh, float_ops::WindowOutputSize(l.h, p.kernel_h, p.stride_h, pt, pb, p.dilation_h, false));
  OCTET_ASSIGN_OR_RETURN(l.ow, float_ops::WindowOutputSize(l.w, p.kernel_w, p.stride_w, pl, pr, p.dilation_w, false));
  std::vector<int64_t> out_dims = {l.n, m};
  if (!one_d) out_dims.push_back(l.oh);
  out_dims.push_back(l.ow);
  OCTET_RETURN_IF_ERROR(float_ops::CheckOutputElements(args, out_dims));
  // The plan pads symmetrically; other pads are written into the staged input (with the zero point, as the plan
  // would read them).
  l.explicit_pads = pt != pb || pl != pr;
  const bool subsample = p.kernel_h == 1 && p.kernel_w == 1 && pt == 0 && pb == 0 && pl == 0 && pr == 0 &&
                         (p.stride_h > 1 || p.stride_w > 1);
  if (subsample) {
    l.sub_h = p.stride_h;
    l.sub_w = p.stride_w;
    l.hp = l.oh;
    l.wp = l.ow;
    p.stride_h = p.stride_w = 1;
  } else if (l.explicit_pads) {
    l.pad_top = pt;
    l.pad_left = pl;
    l.hp = l.h + pt + pb;
    l.wp = l.w + pl + pr;
  } else {
    p.pad_h = pt;
    p.pad_w = pl;
    l.hp = l.h;
    l.wp = l.w;
  }
  l.zero_byte = static_cast<uint8_t>(x_qp->zero_point());
  // One channel is the same bytes in either layout: no transpose then (the digits CNN's and grayscale stems).
  l.nhwc_x = nhwc_x != 0 || c == 1;
  l.nhwc_y = nhwc_y != 0 || m == 1;
  l.stage_x = !l.nhwc_x || subsample || l.explicit_pads;
  OCTET_ASSIGN_OR_RETURN(const int64_t x_elems, float_ops::CheckedProduct(std::vector<int64_t>{l.n, l.hp, l.wp, c}));
  OCTET_ASSIGN_OR_RETURN(const int64_t y_elems, float_ops::CheckedProduct(out_dims));
  l.x_bytes = l.stage_x ? StagedBytes(x_elems) : 0;
  l.y_bytes = l.nhwc_y ? 0 : StagedBytes(y_elems);

  OCTET_ASSIGN_OR_RETURN(QGemmOutput output, ReadLinearOutput(args, *x_qp, *w_qp, m, 2, *y_qp));
  OCTET_ASSIGN_OR_RETURN(const QTensor ohwi, ToOhwi(*args.inputs[1].constant, *w_qp, p.kernel_h, p.kernel_w));
  OCTET_ASSIGN_OR_RETURN(QConv2dPlan plan, QConv2dPlan::Create(args.context, ohwi, p, *x_qp, output));
  const Shape staged_x{l.n, l.hp, l.wp, c};
  const Shape staged_y{l.n, l.oh, l.ow, m};
  OCTET_ASSIGN_OR_RETURN(const Shape plan_y, plan.OutputShape(staged_x));
  if (plan_y != staged_y) return Internal("qconv plan output {} differs from the operator's {}", plan_y, staged_y);

  // The layouts X and Y are stored in: "nchw" (both), "nhwc" (both) or "<x>_<y>".
  const char* layout = nhwc_x == nhwc_y ? (nhwc_x != 0 ? "nhwc" : "nchw") : (nhwc_x != 0 ? "nhwc_nchw" : "nchw_nhwc");
  const std::string name = fmt::format("qconv_{}s8_{}_{}_{}/{}", x_qp->dtype(), reference::QGemmStageName(output.stage),
                                       plan.path(), layout, plan.UkernelName(args.context, l.n * l.oh * l.ow));
  const TransposeBytesUkernelFn transpose = SelectUkernel(args.context, TransposeBytesUkernels()).fn;
  auto kernel = MakeKernel([l, plan = std::move(plan), staged_x, staged_y, transpose, x_dtype = x_qp->dtype(),
                            y_dtype = y_qp->dtype()](const OpRunArgs& r) -> Status {
    auto* xs = reinterpret_cast<uint8_t*>(r.scratch.data());
    uint8_t* ys = xs + l.x_bytes;
    const auto* x = static_cast<const uint8_t*>(r.inputs[0].raw_data());
    auto* y = static_cast<uint8_t*>(r.outputs[0].raw_data());
    if (l.stage_x) ToNhwc(r.context, transpose, l, x, xs);
    // The plan only reads x: an NHWC input is borrowed in place.
    const Tensor xt = Tensor::Borrow(x_dtype, staged_x, l.stage_x ? xs : const_cast<uint8_t*>(x));
    Tensor yt = Tensor::Borrow(y_dtype, staged_y, l.nhwc_y ? y : ys);
    OCTET_RETURN_IF_ERROR(plan.RunInto(r.context, xt, yt));
    if (!l.nhwc_y) TransposeImages(r.context, transpose, l.n, l.m, l.oh * l.ow, false, ys, y);
    return OkStatus();
  });
  return MakePrepared({{y_qp->dtype(), Shape(out_dims)}}, std::move(kernel), name, l.x_bytes + l.y_bytes);
}

}  // namespace

Status RegisterQConvOps(OpRegistry& registry) { return RegisterInt8Op(registry, Int8Op::kQConv, PrepareQConv); }

}  // namespace octet::int8_ops
