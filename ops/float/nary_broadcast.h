// Broadcasting over any number of operands (Where, Max/Min/Sum/Mean, Expand, the comparisons) and a dispatch over
// octet's element types: the output is walked as rows of the longest inner run in which every operand is either
// contiguous or one repeated element, the rows split over threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/dtype.h"
#include "core/op_registry.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/threading.h"

namespace octet::float_ops {

// Numpy multidirectional broadcasting of every shape in `shapes` (at least one).
Result<Shape> BroadcastAll(std::span<const Shape> shapes);

// `outer` rows (an odometer over outer_dims, one stride per operand and dim) of `inner` elements; along a row operand
// k advances by inner_step[k] (1: contiguous, 0: one repeated element). Dims of size 1 are dropped and adjacent dims
// along which every operand is contiguous or repeated are merged, so same-shape operands give one row.
struct NaryPlan {
  int64_t outer = 1, inner = 1;
  std::vector<int64_t> outer_dims;
  std::vector<std::vector<int64_t>> outer_strides;  // [operand][outer dim]
  std::vector<int64_t> inner_step;                  // [operand]
};
NaryPlan PlanNary(std::span<const Shape> operands, const Shape& out);

// Calls fn(row, offsets) for every output row, offsets[k] the element offset of operand k at the row's start; tiles
// of about 16K elements run on the context's threads (each tile walks the odometer from its first row, so the split
// never changes a result).
template <typename Fn>
void ForEachNaryRow(const Context& context, const NaryPlan& p, Fn&& fn) {
  const int64_t rows_per_tile = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(p.inner, 1));
  const size_t n = p.inner_step.size();
  ParallelFor(context, p.outer, rows_per_tile, [&](int64_t begin, int64_t end) {
    const size_t rank = p.outer_dims.size();
    std::vector<int64_t> idx(rank, 0), off(n, 0);
    int64_t rem = begin;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rem % p.outer_dims[d];
      rem /= p.outer_dims[d];
      for (size_t k = 0; k < n; ++k) off[k] += idx[d] * p.outer_strides[k][d];
    }
    for (int64_t row = begin; row < end; ++row) {
      fn(row, off.data());
      for (size_t d = rank; d-- > 0;) {
        for (size_t k = 0; k < n; ++k) off[k] += p.outer_strides[k][d];
        if (++idx[d] < p.outer_dims[d]) break;
        for (size_t k = 0; k < n; ++k) off[k] -= p.outer_strides[k][d] * p.outer_dims[d];
        idx[d] = 0;
      }
    }
  });
}

// y = f(a, b) element-wise with broadcasting, for any element types (a comparison writes u8 from two f32).
template <typename TA, typename TB, typename TY, typename F>
void BroadcastBinary(const Context& context, const NaryPlan& p, F f, const TA* a, const TB* b, TY* y) {
  if (p.outer * p.inner == 0) return;
  const int64_t sa = p.inner_step[0], sb = p.inner_step[1], n = p.inner;
  ForEachNaryRow(context, p, [&](int64_t row, const int64_t* off) {
    const TA* x = a + off[0];
    const TB* z = b + off[1];
    TY* out = y + row * n;
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], z[i]);
    } else if (sa == 0 && sb == 1) {
      const TA v = x[0];
      for (int64_t i = 0; i < n; ++i) out[i] = f(v, z[i]);
    } else if (sa == 1 && sb == 0) {
      const TB v = z[0];
      for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], v);
    } else {
      const TY v = f(x[0], z[0]);
      for (int64_t i = 0; i < n; ++i) out[i] = v;
    }
  });
}

// Calls fn(T{}) with T the C++ element type of `dtype` (float, uint8_t, int8_t, int32_t).
template <typename Fn>
decltype(auto) VisitDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kF32: return fn(float{});
    case DType::kU8: return fn(uint8_t{});
    case DType::kS8: return fn(int8_t{});
    case DType::kS32: return fn(int32_t{});
  }
  return fn(float{});
}

// Fails when input `slot` carries qparams: the operator computes on the stored values, which for quantized codes
// would ignore scale and zero point.
Status CheckNotQuantized(const OpPrepareArgs& args, size_t slot);

}  // namespace octet::float_ops
