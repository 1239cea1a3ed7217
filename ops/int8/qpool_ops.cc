// The int8 pools: the window geometry is the float pools' (ops/float/pool.h); Run walks the precomputed in-range
// taps of each window, one plane per parallel item.
#include "ops/int8/qpool_ops.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/float/pool.h"
#include "ops/int8/activation_qparams.h"
#include "ops/int8/int8_ops.h"
#include "ops/int8/nhwc_layout.h"
#include "ops/reference/qpool_reference.h"

namespace octet::int8_ops {
namespace {

using float_ops::PoolGeometry;
using float_ops::WindowTaps;

// Windows and global pools of more elements would let the int32 sum or f32(n) lose exactness.
constexpr int64_t kMaxPoolWindow = int64_t{1} << 23;

// The output columns whose windows lie entirely inside the input (all kw taps), a contiguous range [lo, hi).
std::pair<int64_t, int64_t> FullColumns(const PoolGeometry& g, const WindowTaps& taps) {
  int64_t lo = 0;
  while (lo < g.ow && taps.cols[static_cast<size_t>(lo)] != std::pair<int64_t, int64_t>{0, g.kw}) ++lo;
  int64_t hi = lo;
  while (hi < g.ow && taps.cols[static_cast<size_t>(hi)] == std::pair<int64_t, int64_t>{0, g.kw}) ++hi;
  return {lo, hi};
}

// One plane of a max pool: starting from the dtype's lowest code gives the largest tap; a window with no tap inside
// the input (possible with ceil_mode) gives `empty`, as the reference. Columns with whole windows run
// as plain strided loops over the output row, one tap at a time (the compiler vectorises them); the border columns
// walk their in-range taps.
template <typename T>
void MaxPoolPlane(const T* xp, T* yp, const PoolGeometry& g, const WindowTaps& taps, std::pair<int64_t, int64_t> full,
                  T empty) {
  constexpr T kLowest = std::numeric_limits<T>::lowest();
  const auto [full_lo, full_hi] = full;
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const int64_t h0 = oh * g.sh - g.pad_top;
    const auto [i_lo, i_hi] = taps.rows[static_cast<size_t>(oh)];
    T* yr = yp + oh * g.ow;
    for (int64_t ow = full_lo; ow < full_hi; ++ow) yr[ow] = i_lo < i_hi ? kLowest : empty;
    for (int64_t i = i_lo; i < i_hi; ++i) {
      const T* xr = xp + (h0 + i * g.dh) * g.w - g.pad_left;
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* xs = xr + j * g.dw;
        if (g.sw == 1) {
          for (int64_t ow = full_lo; ow < full_hi; ++ow) yr[ow] = std::max(yr[ow], xs[ow]);
        } else if (g.sw == 2) {
          for (int64_t ow = full_lo; ow < full_hi; ++ow) yr[ow] = std::max(yr[ow], xs[2 * ow]);
        } else {
          for (int64_t ow = full_lo; ow < full_hi; ++ow) yr[ow] = std::max(yr[ow], xs[ow * g.sw]);
        }
      }
    }
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      if (ow == full_lo) ow = std::max(full_hi, ow);
      if (ow >= g.ow) break;
      const int64_t w0 = ow * g.sw - g.pad_left;
      const auto [j_lo, j_hi] = taps.cols[static_cast<size_t>(ow)];
      T m = i_lo < i_hi && j_lo < j_hi ? kLowest : empty;
      for (int64_t i = i_lo; i < i_hi; ++i) {
        const T* xr = xp + (h0 + i * g.dh) * g.w + w0;
        for (int64_t j = j_lo; j < j_hi; ++j) m = std::max(m, xr[j * g.dw]);
      }
      yr[ow] = m;
    }
  }
}

template <typename T>
void RunPool(const OpRunArgs& r, const PoolGeometry& g, const WindowTaps& taps, bool is_max,
             const reference::QAveragePoolParams& q, int32_t empty, std::pair<int64_t, int64_t> full) {
  const T* px = r.inputs[0].data<T>();
  T* py = r.outputs[0].data<T>();
  ParallelFor(r.context, g.planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* xp = px + p * g.h * g.w;
      T* yp = py + p * g.oh * g.ow;
      if (is_max) {
        MaxPoolPlane(xp, yp, g, taps, full, static_cast<T>(empty));
        continue;
      }
      for (int64_t oh = 0; oh < g.oh; ++oh) {
        const int64_t h0 = oh * g.sh - g.pad_top;
        const auto [i_lo, i_hi] = taps.rows[static_cast<size_t>(oh)];
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const int64_t w0 = ow * g.sw - g.pad_left;
          const auto [j_lo, j_hi] = taps.cols[static_cast<size_t>(ow)];
          int32_t sum = 0;
          for (int64_t i = i_lo; i < i_hi; ++i) {
            const T* xr = xp + (h0 + i) * g.w + w0;
            for (int64_t j = j_lo; j < j_hi; ++j) sum += int32_t{xr[j]};
          }
          const int64_t taken = (i_hi - i_lo) * (j_hi - j_lo);
          sum -= static_cast<int32_t>(taken) * q.x_zp;
          int64_t n = taken;
          if (g.count_include_pad) {
            n = (std::min(h0 + g.kh, g.h + g.pad_bottom) - h0) * (std::min(w0 + g.kw, g.w + g.pad_right) - w0);
          }
          yp[oh * g.ow + ow] = static_cast<T>(reference::QAverageValue(sum, n, q));
        }
      }
    }
  });
}

// A max pool of x and y stored [n][h][w][c] (the layout pass's "nhwc", ops/int8/nhwc_layout.h): per output pixel,
// the channel rows of its in-range taps are combined with max (vectorised over channels); a window without taps
// gives `empty`, as the reference.
template <typename T>
void RunMaxPoolNhwc(const OpRunArgs& r, const PoolGeometry& g, const WindowTaps& taps, T empty) {
  constexpr T kLowest = std::numeric_limits<T>::lowest();
  const T* px = r.inputs[0].data<T>();
  T* py = r.outputs[0].data<T>();
  ParallelFor(r.context, g.n * g.oh, std::max<int64_t>(1, (int64_t{16} << 10) / std::max<int64_t>(1, g.ow * g.c)),
              [&](int64_t begin, int64_t end) {
                // Locals: u8 stores may alias anything reached through a pointer (the captures), which would keep
                // the channel loops scalar.
                const int64_t c = g.c;
                for (int64_t row = begin; row < end; ++row) {
                  const int64_t b = row / g.oh, oh = row % g.oh;
                  const int64_t h0 = oh * g.sh - g.pad_top;
                  const auto [i_lo, i_hi] = taps.rows[static_cast<size_t>(oh)];
                  for (int64_t ow = 0; ow < g.ow; ++ow) {
                    const int64_t w0 = ow * g.sw - g.pad_left;
                    const auto [j_lo, j_hi] = taps.cols[static_cast<size_t>(ow)];
                    // Restrict: x and y never overlap, so the channel loops vectorise without alias checks.
                    T* __restrict y = py + (row * g.ow + ow) * c;
                    const T init = i_lo < i_hi && j_lo < j_hi ? kLowest : empty;
                    for (int64_t ch = 0; ch < c; ++ch) y[ch] = init;
                    for (int64_t i = i_lo; i < i_hi; ++i) {
                      for (int64_t j = j_lo; j < j_hi; ++j) {
                        const T* __restrict x = px + ((b * g.h + h0 + i * g.dh) * g.w + w0 + j * g.dw) * c;
                        for (int64_t ch = 0; ch < c; ++ch) y[ch] = std::max(y[ch], x[ch]);
                      }
                    }
                  }
                }
              });
}

// The tiling 2x2 max pool (IsTiling2x2MaxPool) of x and y stored [n][h][w][c]: output row r of all images together
// reads input rows 2r and 2r + 1, each output pixel the channel rows of two adjacent pixels in each.
template <typename T>
void RunMaxPool2x2Nhwc(const OpRunArgs& r, const PoolGeometry& g) {
  const T* px = r.inputs[0].data<T>();
  T* py = r.outputs[0].data<T>();
  ParallelFor(r.context, g.n * g.oh, std::max<int64_t>(1, (int64_t{16} << 10) / (4 * g.ow * g.c)),
              [&](int64_t begin, int64_t end) {
                const int64_t c = g.c, ow = g.ow, row_out = ow * c;  // locals, as in RunMaxPoolNhwc
                for (int64_t row = begin; row < end; ++row) {
                  const T* a = px + row * 4 * row_out;
                  const T* b = a + 2 * row_out;
                  T* y = py + row * row_out;
                  for (int64_t o = 0; o < ow; ++o) {
                    const T* __restrict a0 = a + 2 * o * c;
                    const T* __restrict b0 = b + 2 * o * c;
                    T* __restrict yo = y + o * c;
                    for (int64_t ch = 0; ch < c; ++ch) {
                      yo[ch] = std::max(std::max(a0[ch], a0[c + ch]), std::max(b0[ch], b0[c + ch]));
                    }
                  }
                }
              });
}

// A 2x2 stride-2 max pool whose windows tile the input exactly (no pads or dilation, even sizes: the digits CNN's and
// many small networks'): output row r of all planes together reads input rows 2r and 2r + 1, so one flat loop over
// the rows of every plane replaces a per-plane walk of the window taps, which cost several times the max itself
// on small images.
bool IsTiling2x2MaxPool(const PoolGeometry& g) {
  return g.rank == 4 && g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.dh == 1 && g.dw == 1 && g.pad_top == 0 &&
         g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0 && g.h == 2 * g.oh && g.w == 2 * g.ow;
}

template <typename T>
void RunMaxPool2x2(const OpRunArgs& r, const PoolGeometry& g) {
  const T* px = r.inputs[0].data<T>();
  T* py = r.outputs[0].data<T>();
  const int64_t ow = g.ow;
  ParallelFor(r.context, g.planes * g.oh, std::max<int64_t>(1, (int64_t{16} << 10) / (4 * ow)),
              [&](int64_t begin, int64_t end) {
                for (int64_t row = begin; row < end; ++row) {
                  const T* a = px + row * 4 * ow;
                  const T* b = a + 2 * ow;
                  T* y = py + row * ow;
                  for (int64_t o = 0; o < ow; ++o) {
                    y[o] = std::max(std::max(a[2 * o], a[2 * o + 1]), std::max(b[2 * o], b[2 * o + 1]));
                  }
                }
              });
}

// Global pooling of x stored [n][spatial][c] (ops/int8/nhwc_layout.h): per image, one row of channel sums or maxima
// over the pixels, with the integer results of RunGlobalPool.
template <typename T>
void RunGlobalPoolNhwc(const OpRunArgs& r, int64_t n, int64_t channels, int64_t pixels, bool is_max,
                       const reference::QAveragePoolParams& q) {
  const T* px = r.inputs[0].data<T>();
  T* py = r.outputs[0].data<T>();
  ParallelFor(r.context, n, 1, [&](int64_t begin, int64_t end) {
    const int64_t c = channels, spatial = pixels;  // locals, as in RunMaxPoolNhwc
    std::vector<int32_t> acc(static_cast<size_t>(c));
    for (int64_t b = begin; b < end; ++b) {
      const T* xb = px + b * spatial * c;
      for (int64_t ch = 0; ch < c; ++ch) acc[static_cast<size_t>(ch)] = xb[ch];
      for (int64_t i = 1; i < spatial; ++i) {
        const T* row = xb + i * c;
        for (int64_t ch = 0; ch < c; ++ch) {
          int32_t& a = acc[static_cast<size_t>(ch)];
          a = is_max ? std::max<int32_t>(a, row[ch]) : a + int32_t{row[ch]};
        }
      }
      for (int64_t ch = 0; ch < c; ++ch) {
        const int32_t a = acc[static_cast<size_t>(ch)];
        py[b * c + ch] =
            is_max ? static_cast<T>(a)
                   : static_cast<T>(reference::QAverageValue(a - static_cast<int32_t>(spatial) * q.x_zp, spatial, q));
      }
    }
  });
}

template <typename T>
void RunGlobalPool(const OpRunArgs& r, int64_t planes, int64_t spatial, bool is_max,
                   const reference::QAveragePoolParams& q) {
  const T* px = r.inputs[0].data<T>();
  T* py = r.outputs[0].data<T>();
  ParallelFor(r.context, planes, std::max<int64_t>(1, 8192 / spatial), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* xp = px + p * spatial;
      if (is_max) {
        T m = xp[0];
        for (int64_t i = 1; i < spatial; ++i) m = xp[i] > m ? xp[i] : m;
        py[p] = m;
      } else {
        int32_t sum = 0;
        for (int64_t i = 0; i < spatial; ++i) sum += int32_t{xp[i]};
        sum -= static_cast<int32_t>(spatial) * q.x_zp;
        py[p] = static_cast<T>(reference::QAverageValue(sum, spatial, q));
      }
    }
  });
}

// Reads x's and y's qparams; max pools need them equal.
Result<std::pair<QActivation, QActivation>> ReadPoolQParams(const OpPrepareArgs& args, bool is_max,
                                                            std::string_view op) {
  OCTET_ASSIGN_OR_RETURN(const QActivation qx, ReadInputActivation(args, 0, "X"));
  OCTET_ASSIGN_OR_RETURN(const QActivation qy, ReadOutputActivation(args, 0, "Y"));
  if (is_max) {
    OCTET_RETURN_IF_ERROR(CheckSharedQParams(qx, qy, op));
  } else if (qx.dtype != qy.dtype) {
    return InvalidArgument("{} needs X and Y of one dtype, got {} and {}", op, qx.dtype, qy.dtype);
  }
  return std::pair<QActivation, QActivation>{qx, qy};
}

reference::QAveragePoolParams AverageParams(const QActivation& qx, const QActivation& qy) {
  return {qx.scale, qy.scale, qx.zero_point, qy.zero_point, qy.quant_min, qy.quant_max};
}

Result<PreparedOp> PrepareQPool(const OpPrepareArgs& args, bool is_max) {
  const std::string_view op = Int8OpName(is_max ? Int8Op::kQMaxPool : Int8Op::kQAveragePool);
  OCTET_RETURN_IF_ERROR(float_ops::CheckArity(args, 1, 1));
  OCTET_ASSIGN_OR_RETURN(const auto qparams, ReadPoolQParams(args, is_max, op));
  // Plain references, not structured bindings: the lambdas below capture them (clang 14 refuses bindings there).
  const QActivation& qx = qparams.first;
  const QActivation& qy = qparams.second;
  OCTET_ASSIGN_OR_RETURN(const PoolGeometry g, float_ops::PreparePoolGeometry(args, is_max));
  if (g.kh * g.kw > kMaxPoolWindow) {
    return InvalidArgument("{} windows of {} x {} elements are larger than the supported 2^23", op, g.kh, g.kw);
  }
  auto taps = std::make_shared<WindowTaps>(float_ops::ComputeWindowTaps(g));
  const std::pair<int64_t, int64_t> full = FullColumns(g, *taps);  // found once, not per call
  const reference::QAveragePoolParams q = AverageParams(qx, qy);
  const int32_t empty = qx.quant_min;
  OCTET_ASSIGN_OR_RETURN(const int64_t nhwc, args.node.attributes.GetInt(kNhwcAttribute, 0));
  if (nhwc != 0 && (!is_max || g.rank != 4)) {
    return InvalidArgument("attribute '{}' (set by the NHWC layout pass) needs a 2-D QMaxPool", kNhwcAttribute);
  }
  // The kernel for this geometry and layout, instantiated for x's dtype (u8 or s8).
  auto by_dtype = [&](auto run) -> std::unique_ptr<OpKernel> {
    if (qx.dtype == DType::kU8) {
      return MakeKernel([=](const OpRunArgs& r) -> Status {
        run(r, uint8_t{});
        return OkStatus();
      });
    }
    return MakeKernel([=](const OpRunArgs& r) -> Status {
      run(r, int8_t{});
      return OkStatus();
    });
  };
  const auto prepared = [&](std::unique_ptr<OpKernel> kernel, std::string_view name) {
    return float_ops::MakePrepared(
        {{qy.dtype, Shape(g.OutputDims())}}, std::move(kernel),
        fmt::format("{}_{}{}", is_max ? "qmax_pool" : "qaverage_pool", DTypeName(qx.dtype), name));
  };
  if (nhwc != 0 && IsTiling2x2MaxPool(g)) {
    return prepared(by_dtype([g](const OpRunArgs& r, auto t) { RunMaxPool2x2Nhwc<decltype(t)>(r, g); }), "_2x2_nhwc");
  }
  if (nhwc != 0) {
    return prepared(by_dtype([g, taps, empty](const OpRunArgs& r, auto t) {
                      RunMaxPoolNhwc<decltype(t)>(r, g, *taps, static_cast<decltype(t)>(empty));
                    }),
                    "_nhwc");
  }
  if (is_max && IsTiling2x2MaxPool(g)) {
    return prepared(by_dtype([g](const OpRunArgs& r, auto t) { RunMaxPool2x2<decltype(t)>(r, g); }), "");
  }
  return prepared(by_dtype([g, taps, is_max, q, empty, full](const OpRunArgs& r, auto t) {
                    RunPool<decltype(t)>(r, g, *taps, is_max, q, empty, full);
                  }),
                  "");
}

Result<PreparedOp> PrepareQGlobalPool(const OpPrepareArgs& args, bool is_max) {
  const std::string_view op = Int8OpName(is_max ? Int8Op::kQGlobalMaxPool : Int8Op::kQGlobalAveragePool);
  OCTET_RETURN_IF_ERROR(float_ops::CheckArity(args, 1, 1));
  OCTET_ASSIGN_OR_RETURN(const auto qparams, ReadPoolQParams(args, is_max, op));
  const QActivation& qx = qparams.first;
  const QActivation& qy = qparams.second;
  const Shape& x = args.inputs[0].shape;
  if (x.rank() < 3) return InvalidArgument("X must be [N, C, spatial...], got {}", x);
  std::vector<int64_t> out_dims = {x.dim(0), x.dim(1)};
  out_dims.resize(static_cast<size_t>(x.rank()), 1);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t spatial = x.Product(2, x.rank());
  if (spatial == 0) return InvalidArgument("X {} has no spatial elements", x);
  if (spatial > kMaxPoolWindow) {
    return InvalidArgument("{} over {} spatial elements is larger than the supported 2^23", op, spatial);
  }
  const reference::QAveragePoolParams q = AverageParams(qx, qy);
  // The layout pass's "nhwc_input": x stored [N, H, W, C]; y [N, C, 1, 1] is the same bytes either way.
  OCTET_ASSIGN_OR_RETURN(const int64_t nhwc, args.node.attributes.GetInt(kNhwcInputAttribute, 0));
  if (nhwc != 0 && x.rank() != 4) {
    return InvalidArgument("attribute '{}' (set by the NHWC layout pass) needs a 4-D X, got {}", kNhwcInputAttribute,
                           x);
  }
  const int64_t n = x.dim(0), c = x.dim(1);
  std::unique_ptr<OpKernel> kernel;
  if (qx.dtype == DType::kU8) {
    kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
      if (nhwc != 0) {
        RunGlobalPoolNhwc<uint8_t>(r, n, c, spatial, is_max, q);
      } else {
        RunGlobalPool<uint8_t>(r, planes, spatial, is_max, q);
      }
      return OkStatus();
    });
  } else {
    kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
      if (nhwc != 0) {
        RunGlobalPoolNhwc<int8_t>(r, n, c, spatial, is_max, q);
      } else {
        RunGlobalPool<int8_t>(r, planes, spatial, is_max, q);
      }
      return OkStatus();
    });
  }
  return float_ops::MakePrepared({{qy.dtype, Shape(std::move(out_dims))}}, std::move(kernel),
                                 fmt::format("{}_{}{}", is_max ? "qglobal_max_pool" : "qglobal_average_pool",
                                             DTypeName(qx.dtype), nhwc != 0 ? "_nhwc" : ""));
}

}  // namespace

Status RegisterQPoolOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(
      RegisterInt8Op(registry, Int8Op::kQMaxPool, [](const OpPrepareArgs& a) { return PrepareQPool(a, true); }));
  OCTET_RETURN_IF_ERROR(
      RegisterInt8Op(registry, Int8Op::kQAveragePool, [](const OpPrepareArgs& a) { return PrepareQPool(a, false); }));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQGlobalMaxPool,
                                       [](const OpPrepareArgs& a) { return PrepareQGlobalPool(a, true); }));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQGlobalAveragePool,
                                       [](const OpPrepareArgs& a) { return PrepareQGlobalPool(a, false); }));
  return OkStatus();
}

}  // namespace octet::int8_ops
