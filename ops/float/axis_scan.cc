// ArgMax/ArgMin, CumSum and TopK: the input is seen as [outer, n, inner] around the axis, and each of the
// outer * inner lines along the axis is scanned on its own (lines split over threads).
#include "ops/float/axis_scan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/threading.h"
#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
};

Lines AroundAxis(const Shape& shape, int axis) {
  return Lines{shape.Product(0, axis), shape.dim(axis), shape.Product(axis + 1, shape.rank())};
}

// a before b in descending order (largest) or ascending order; NaN counts as the largest value.
template <typename T>
bool Before(T a, T b, bool largest) {
  if constexpr (std::is_same_v<T, float>) {
    if (std::isnan(a) || std::isnan(b))
      return largest ? (std::isnan(a) && !std::isnan(b)) : (!std::isnan(a) && std::isnan(b));
  }
  return largest ? a > b : a < b;
}

Result<PreparedOp> PrepareArgExtreme(const OpPrepareArgs& args, bool largest) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, 0));
  const ValueInfo& x = args.inputs[0];
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, at.GetInt("axis", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t keepdims, at.GetInt("keepdims", 1));
  OCTET_ASSIGN_OR_RETURN(int64_t last, at.GetInt("select_last_index", 0));
  if (x.shape.rank() == 0) return InvalidArgument("the input must have rank >= 1, got a scalar");
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, x.shape.rank()));
  if (x.shape.dim(axis) == 0) return InvalidArgument("axis {} is empty: there is no {}", axis, largest ? "max" : "min");
  std::vector<int64_t> dims = x.shape.dims();
  if (keepdims != 0) {
    dims[static_cast<size_t>(axis)] = 1;
  } else {
    dims.erase(dims.begin() + axis);
  }
  const Lines l = AroundAxis(x.shape, axis);
  const DType dtype = x.dtype;
  const bool select_last = last != 0;
  auto kernel = MakeKernel([l, dtype, largest, select_last](const OpRunArgs& r) -> Status {
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* px = r.inputs[0].data<T>();
      int32_t* py = r.outputs[0].data<int32_t>();
      ParallelFor(r.context, l.outer * l.inner, 256, [&](int64_t begin, int64_t end) {
        for (int64_t line = begin; line < end; ++line) {
          const T* base = px + (line / l.inner) * l.n * l.inner + line % l.inner;
          int64_t best = 0;
          for (int64_t i = 1; i < l.n; ++i) {
            const T v = base[i * l.inner], b = base[best * l.inner];
            if (Before(v, b, largest) || (select_last && !Before(b, v, largest))) best = i;
          }
          py[line] = static_cast<int32_t>(best);
        }
      });
    });
    return OkStatus();
  });
  return MakePrepared({{DType::kS32, Shape(dims)}}, std::move(kernel),
                      fmt::format("arg{}_{}", largest ? "max" : "min", DTypeName(dtype)));
}

Result<PreparedOp> PrepareCumSum(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, 0));
  const ValueInfo& x = args.inputs[0];
  if (x.dtype != DType::kF32 && x.dtype != DType::kS32) {
    return InvalidArgument("CumSum supports f32 and s32 (ONNX int32/int64), got {}", x.dtype);
  }
  const ValueInfo& axis_info = args.inputs[1];
  if (axis_info.dtype != DType::kS32 || axis_info.shape.NumElements() != 1 || axis_info.shape.rank() > 1) {
    return InvalidArgument("input 1 (axis) must be one integer, got {} {}", axis_info.dtype, axis_info.shape);
  }
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> axis_value, ConstantInts(args, 1, "axis"));
  if (x.shape.rank() == 0) return InvalidArgument("the input must have rank >= 1, got a scalar");
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_value[0], x.shape.rank()));
  OCTET_ASSIGN_OR_RETURN(int64_t exclusive, args.node.attributes.GetInt("exclusive", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t reverse, args.node.attributes.GetInt("reverse", 0));
  const Lines l = AroundAxis(x.shape, axis);
  const DType dtype = x.dtype;
  auto kernel = MakeKernel([l, dtype, exclusive, reverse](const OpRunArgs& r) -> Status {
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      // Integer sums wrap in int64 as ONNX's int64 would, then narrow to octet's s32.
      using Acc = std::conditional_t<std::is_same_v<T, float>, float, int64_t>;
      const T* px = r.inputs[0].data<T>();
      T* py = r.outputs[0].data<T>();
      ParallelFor(r.context, l.outer * l.inner, 256, [&](int64_t begin, int64_t end) {
        for (int64_t line = begin; line < end; ++line) {
          const int64_t off = (line / l.inner) * l.n * l.inner + line % l.inner;
          Acc sum = 0;
          for (int64_t k = 0; k < l.n; ++k) {
            const int64_t i = reverse != 0 ? l.n - 1 - k : k;
            const T v = px[off + i * l.inner];
            if (exclusive != 0) {
              py[off + i * l.inner] = static_cast<T>(sum);
              sum += static_cast<Acc>(v);
            } else {
              sum += static_cast<Acc>(v);
              py[off + i * l.inner] = static_cast<T>(sum);
            }
          }
        }
      });
    });
    return OkStatus();
  });
  return MakePrepared({{dtype, x.shape}}, std::move(kernel), fmt::format("cumsum_{}", DTypeName(dtype)));
}

Result<PreparedOp> PrepareTopK(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2, 2, 2));
  OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, 0));
  const ValueInfo& x = args.inputs[0];
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, at.GetInt("axis", -1));
  OCTET_ASSIGN_OR_RETURN(int64_t largest_attr, at.GetInt("largest", 1));
  OCTET_ASSIGN_OR_RETURN(int64_t sorted_attr, at.GetInt("sorted", 1));
  if (x.shape.rank() == 0) return InvalidArgument("the input must have rank >= 1, got a scalar");
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, x.shape.rank()));
  if (args.inputs[1].shape.NumElements() != 1) {
    return InvalidArgument("input 1 (K) must hold one value, got shape {}", args.inputs[1].shape);
  }
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> kv, ConstantInts(args, 1, "K"));
  const int64_t k = kv[0];
  if (k < 0 || k > x.shape.dim(axis)) {
    return InvalidArgument("K = {} must be between 0 and the axis length {}", k, x.shape.dim(axis));
  }
  std::vector<int64_t> dims = x.shape.dims();
  dims[static_cast<size_t>(axis)] = k;
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, dims));
  const Lines l = AroundAxis(x.shape, axis);
  const DType dtype = x.dtype;
  const bool largest = largest_attr != 0;
  // Unsorted output is allowed any order; octet returns the sorted one.
  (void)sorted_attr;
  auto kernel = MakeKernel([l, k, dtype, largest](const OpRunArgs& r) -> Status {
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* px = r.inputs[0].data<T>();
      T* values = r.outputs[0].data<T>();
      int32_t* indices = r.outputs[1].data<int32_t>();
      ParallelFor(r.context, l.outer * l.inner, 64, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> order(static_cast<size_t>(l.n));
        for (int64_t line = begin; line < end; ++line) {
          const int64_t o = line / l.inner, i = line % l.inner;
          const T* base = px + o * l.n * l.inner + i;
          std::iota(order.begin(), order.end(), int64_t{0});
          // Ties keep the lower index first (ONNX's rule).
          std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
            const T va = base[a * l.inner], vb = base[b * l.inner];
            if (Before(va, vb, largest)) return true;
            if (Before(vb, va, largest)) return false;
            return a < b;
          });
          for (int64_t j = 0; j < k; ++j) {
            const int64_t at_out = (o * k + j) * l.inner + i;
            values[at_out] = base[order[static_cast<size_t>(j)] * l.inner];
            indices[at_out] = static_cast<int32_t>(order[static_cast<size_t>(j)]);
          }
        }
      });
    });
    return OkStatus();
  });
  return MakePrepared({{dtype, Shape(dims)}, {DType::kS32, Shape(dims)}}, std::move(kernel),
                      fmt::format("topk_{}", DTypeName(dtype)));
}

}  // namespace

Status RegisterAxisScanOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(
      RegisterFloatOp(registry, FloatOp::kArgMax, [](const OpPrepareArgs& a) { return PrepareArgExtreme(a, true); }));
  OCTET_RETURN_IF_ERROR(
      RegisterFloatOp(registry, FloatOp::kArgMin, [](const OpPrepareArgs& a) { return PrepareArgExtreme(a, false); }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kCumSum, PrepareCumSum));
  return RegisterFloatOp(registry, FloatOp::kTopK, PrepareTopK);
}

}  // namespace octet::float_ops
