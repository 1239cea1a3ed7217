// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
#include "ops/float/pool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/float/pool_nd.h"
#include "ops/float/registry.h"

namespace octet::float_ops {

std::vector<std::pair<int64_t, int64_t>> ComputeTaps(int64_t count, int64_t stride, int64_t pad, int64_t k,
                                                     int64_t dilation, int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> taps(static_cast<size_t>(count));
  for (int64_t o = 0; o < count; ++o) {
    const int64_t start = o * stride - pad;
    const int64_t lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    const int64_t hi = n - start <= 0 ? 0 : std::min(k, (n - start + dilation - 1) / dilation);
    taps[static_cast<size_t>(o)] = {lo, std::max(lo, hi)};
  }
  return taps;
}

WindowTaps ComputeWindowTaps(const PoolGeometry& g) {
  WindowTaps taps;
  taps.rows = ComputeTaps(g.oh, g.sh, g.pad_top, g.kh, g.dh, g.h);
  taps.cols = ComputeTaps(g.ow, g.sw, g.pad_left, g.kw, g.dw, g.w);
  return taps;
}

std::vector<int64_t> PoolGeometry::OutputDims() const {
  std::vector<int64_t> dims = {n, c};
  if (rank == 4) dims.push_back(oh);
  dims.push_back(ow);
  return dims;
}

Result<PoolGeometry> PreparePoolGeometry(const OpPrepareArgs& args, bool is_max) {
  const Shape& x = args.inputs[0].shape;
  if (x.rank() != 3 && x.rank() != 4) {
    return x.rank() == 5 ? Unimplemented("3-D pooling is not supported")
                         : InvalidArgument("X must be [N, C, W] or [N, C, H, W], got {}", x);
  }
  const size_t nd = static_cast<size_t>(x.rank() - 2);
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, at.GetInts("kernel_shape"));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads_attr, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(std::string auto_pad, at.GetString("auto_pad", "NOTSET"));
  OCTET_ASSIGN_OR_RETURN(int64_t ceil_mode, at.GetInt("ceil_mode", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t count_include_pad, at.GetInt("count_include_pad", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t storage_order, at.GetInt("storage_order", 0));
  if (storage_order != 0) return Unimplemented("storage_order {} is not supported", storage_order);

  if (!is_max && dilations != std::vector<int64_t>(nd, 1)) {
    return Unimplemented("AveragePool with dilations is not supported");
  }
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("kernel_shape", kernel, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("strides", strides, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("dilations", dilations, nd));
  const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ResolvePads(auto_pad, pads_attr, in, kernel, strides, dilations));
  PoolGeometry g;
  g.n = x.dim(0);
  g.c = x.dim(1);
  g.rank = x.rank();
  g.planes = x.dim(0) * x.dim(1);
  g.count_include_pad = count_include_pad != 0;
  if (nd == 1) {
    g.w = x.dim(2), g.kw = kernel[0], g.sw = strides[0], g.dw = dilations[0];
    g.pad_left = pads[0], g.pad_right = pads[1];
  } else {
    g.h = x.dim(2), g.w = x.dim(3), g.kh = kernel[0], g.kw = kernel[1], g.sh = strides[0], g.sw = strides[1];
    g.dh = dilations[0], g.dw = dilations[1];
    g.pad_top = pads[0], g.pad_left = pads[1], g.pad_bottom = pads[2], g.pad_right = pads[3];
  }
  // MaxPool pads at least as large as the kernel would give windows that see only padding (-inf).
  if (is_max && (g.pad_top >= g.kh || g.pad_bottom >= g.kh || g.pad_left >= g.kw || g.pad_right >= g.kw)) {
    return InvalidArgument("MaxPool pads must be smaller than the kernel");
  }
  OCTET_ASSIGN_OR_RETURN(g.oh, WindowOutputSize(g.h, g.kh, g.sh, g.pad_top, g.pad_bottom, g.dh, ceil_mode != 0));
  OCTET_ASSIGN_OR_RETURN(g.ow, WindowOutputSize(g.w, g.kw, g.sw, g.pad_left, g.pad_right, g.dw, ceil_mode != 0));
  std::vector<int64_t> out_dims = {x.dim(0), x.dim(1)};
  if (nd == 2) out_dims.push_back(g.oh);
  out_dims.push_back(g.ow);
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out_dims));
  // The tap tables below have oh and ow entries even when the output is empty (N or C = 0).
  if (g.oh > args.max_output_elements || g.ow > args.max_output_elements) {
    return OutOfRange("output rows {} and columns {} exceed the limit of {} elements", g.oh, g.ow,
                      args.max_output_elements);
  }
  return g;
}

namespace {

// NaN-propagating max step: a NaN in either operand stays (once m is NaN, v > m is false). A select that the
// compiler turns into compare-and-blend vectors, so a whole input row is reduced at once.
inline float MaxStep(float m, float v) { return v > m || v != v ? v : m; }

// One plane of MaxPool, separable: per output row, the elementwise max of its window's input rows (contiguous,
// vectorized), then per output column the max of its window's columns of that row. The 3x3 stride-2 pool of
// ResNet's stem read every input 9 / 4 times through per-window loops; here each is read kh / sh times in a
// straight line. The maximum is the same value as a window-order scan (max is exact); only a zero maximum of a
// window holding both -0 and +0 may come out with the other sign. `taps`: ComputeWindowTaps (rows only);
// `row`: w floats.
void MaxPoolPlane(const PoolGeometry& g, const WindowTaps& taps, const float* xp, float* yp, float* row) {
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const int64_t h0 = oh * g.sh - g.pad_top;
    const auto [i_lo, i_hi] = taps.rows[static_cast<size_t>(oh)];
    const int64_t w = g.w;  // a local: stores to `row` could otherwise alias g and block vectorizing
    std::fill(row, row + w, -std::numeric_limits<float>::infinity());
    for (int64_t i = i_lo; i < i_hi; ++i) {
      const float* xr = xp + (h0 + i * g.dh) * w;
      for (int64_t iw = 0; iw < w; ++iw) row[iw] = MaxStep(row[iw], xr[iw]);
    }
    // Columns tap by tap over the outputs whose window has that tap inside the input (ow * sw - pad_left + j * dw
    // in [0, w)): straight loops the compiler vectorizes, where a per-window loop compiled to scalar selects.
    const int64_t ow_count = g.ow, sw = g.sw;
    float* yr = yp + oh * ow_count;
    std::fill(yr, yr + ow_count, -std::numeric_limits<float>::infinity());
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t off = j * g.dw - g.pad_left;
      const int64_t lo = std::clamp<int64_t>(off >= 0 ? 0 : (-off + sw - 1) / sw, 0, ow_count);
      const int64_t hi = std::clamp<int64_t>(w - off <= 0 ? 0 : (w - off + sw - 1) / sw, lo, ow_count);
      for (int64_t ow = lo; ow < hi; ++ow) yr[ow] = MaxStep(yr[ow], row[ow * sw + off]);
    }
    // One NaN bit pattern, as the window scan wrote.
    for (int64_t ow = 0; ow < ow_count; ++ow) {
      if (yr[ow] != yr[ow]) yr[ow] = std::numeric_limits<float>::quiet_NaN();
    }
  }
}

Result<PreparedOp> PreparePool(const OpPrepareArgs& args, bool is_max) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1, 1, 2));
  // 3-D windows, MaxPool's Indices and integer MaxPool take the general N-D path.
  const bool indices = args.node.outputs.size() > 1 && args.node.outputs[1] != kNoValue;
  if (args.inputs[0].shape.rank() == 5 || indices || (is_max && args.inputs[0].dtype != DType::kF32)) {
    return PrepareNdPool(args, is_max);
  }
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  OCTET_ASSIGN_OR_RETURN(const PoolGeometry g, PreparePoolGeometry(args, is_max));
  const std::vector<int64_t> out_dims = g.OutputDims();
  std::vector<OutputInfo> outs = {{DType::kF32, Shape(out_dims)}};
  if (args.node.outputs.size() > 1) outs.push_back({DType::kS32, Shape(out_dims)});

  // The in-range window taps of every output row and column, computed once here: the divisions they need would
  // otherwise dominate small windows (ResNet's 3x3 stride-2 MaxPool).
  auto taps = std::make_shared<WindowTaps>(ComputeWindowTaps(g));
  auto kernel_fn = MakeKernel([g, is_max, taps](const OpRunArgs& r) -> Status {
    const float* px = r.inputs[0].data<float>();
    float* py = r.outputs[0].data<float>();
    if (is_max) {
      ParallelFor(r.context, g.planes, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> row(static_cast<size_t>(g.w));
        for (int64_t p = begin; p < end; ++p)
          MaxPoolPlane(g, *taps, px + p * g.h * g.w, py + p * g.oh * g.ow, row.data());
      });
      return OkStatus();
    }
    ParallelFor(r.context, g.planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float* xp = px + p * g.h * g.w;
        float* yp = py + p * g.oh * g.ow;
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          const int64_t h0 = oh * g.sh - g.pad_top;
          const auto [i_lo, i_hi] = taps->rows[static_cast<size_t>(oh)];
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const int64_t w0 = ow * g.sw - g.pad_left;
            const auto [j_lo, j_hi] = taps->cols[static_cast<size_t>(ow)];
            const int64_t h1 = std::min(h0 + g.kh, g.h + g.pad_bottom);
            const int64_t w1 = std::min(w0 + g.kw, g.w + g.pad_right);
            float sum = 0.0f;
            for (int64_t i = i_lo; i < i_hi; ++i) {
              const float* xr = xp + (h0 + i) * g.w + w0;
              for (int64_t j = j_lo; j < j_hi; ++j) sum += xr[j];
            }
            const int64_t count = g.count_include_pad ? (h1 - h0) * (w1 - w0) : (i_hi - i_lo) * (j_hi - j_lo);
            yp[oh * g.ow + ow] = count > 0 ? sum / static_cast<float>(count) : 0.0f;
          }
        }
      }
    });
    return OkStatus();
  });
  return MakePrepared(std::move(outs), std::move(kernel_fn), is_max ? "max_pool_f32" : "average_pool_f32");
}

Result<PreparedOp> PrepareGlobalPool(const OpPrepareArgs& args, bool is_max) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  const Shape& x = args.inputs[0].shape;
  if (x.rank() < 3) return InvalidArgument("X must be [N, C, spatial...], got {}", x);
  std::vector<int64_t> out_dims = {x.dim(0), x.dim(1)};
  out_dims.resize(static_cast<size_t>(x.rank()), 1);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t spatial = x.Product(2, x.rank());
  if (spatial == 0) return InvalidArgument("X {} has no spatial elements", x);
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const float* px = r.inputs[0].data<float>();
    float* py = r.outputs[0].data<float>();
    ParallelFor(r.context, planes, std::max<int64_t>(1, 8192 / spatial), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float* xp = px + p * spatial;
        if (is_max) {
          float m = xp[0];
          for (int64_t i = 1; i < spatial; ++i) m = (xp[i] > m || std::isnan(xp[i])) && !std::isnan(m) ? xp[i] : m;
          py[p] = m;
        } else {
          float s = 0.0f;
          for (int64_t i = 0; i < spatial; ++i) s += xp[i];
          py[p] = s / static_cast<float>(spatial);
        }
      }
    });
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, Shape(out_dims)}}, std::move(kernel),
                      is_max ? "global_max_pool_f32" : "global_average_pool_f32");
}

}  // namespace

Status RegisterPoolOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(
      RegisterFloatOp(registry, FloatOp::kMaxPool, [](const OpPrepareArgs& a) { return PreparePool(a, true); }));
  OCTET_RETURN_IF_ERROR(
      RegisterFloatOp(registry, FloatOp::kAveragePool, [](const OpPrepareArgs& a) { return PreparePool(a, false); }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kGlobalAveragePool,
                                        [](const OpPrepareArgs& a) { return PrepareGlobalPool(a, false); }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kGlobalMaxPool,
                                        [](const OpPrepareArgs& a) { return PrepareGlobalPool(a, true); }));
  return OkStatus();
}

}  // namespace octet::float_ops
