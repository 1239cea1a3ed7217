// Reductions: each output element combines the inputs at base[o] + offset[k] for every reduced position k.
#include "ops/float/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

enum class ReduceKind { kMean, kSum, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// The sum-like reductions: the combination of count elements read through `at`, in double.
template <typename At>
double Accumulate(ReduceKind kind, int64_t count, At at) {
  double s = kind == ReduceKind::kProd ? 1.0 : 0.0;
  if (kind == ReduceKind::kLogSumExp) {
    // Shifted by the largest element so that exp cannot overflow.
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < count; ++k) m = std::max(m, static_cast<double>(at(k)));
    if (std::isinf(m)) return m;
    for (int64_t k = 0; k < count; ++k) s += std::exp(static_cast<double>(at(k)) - m);
    return std::log(s) + m;
  }
  for (int64_t k = 0; k < count; ++k) {
    const double v = at(k);
    switch (kind) {
      case ReduceKind::kProd: s *= v; break;
      case ReduceKind::kL1: s += std::abs(v); break;
      case ReduceKind::kL2:
      case ReduceKind::kSumSquare: s += v * v; break;
      default: s += v; break;
    }
  }
  if (kind == ReduceKind::kMean)
    s = count == 0 ? std::numeric_limits<double>::quiet_NaN() : s / static_cast<double>(count);
  if (kind == ReduceKind::kL2) s = std::sqrt(s);
  if (kind == ReduceKind::kLogSum) s = std::log(s);
  return s;
}

// Mean or sum of `count` contiguous floats in double, over four partial sums (a single running sum is a chain of
// dependent adds, one add latency per element: LayerNorm's two row means per layer in a transformer). A double
// holds every partial sum of floats exactly unless the values span more than 2^29 in magnitude, so this equals the
// sequential sum except then, and after rounding to float differs from it by at most one unit in the last place.
double ContiguousSum(const float* x, int64_t count) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t k = 0;
  for (; k + 4 <= count; k += 4) {
    s0 += x[k];
    s1 += x[k + 1];
    s2 += x[k + 2];
    s3 += x[k + 3];
  }
  for (; k < count; ++k) s0 += x[k];
  return (s0 + s1) + (s2 + s3);
}

// Offsets (row-major, in `shape`) of every index over the dims where `mask` is set, others fixed at 0.
std::vector<int64_t> Offsets(const Shape& shape, const std::vector<bool>& mask) {
  const std::vector<int64_t> strides = RowMajorStrides(shape);
  std::vector<int64_t> offsets = {0};
  for (int d = 0; d < shape.rank(); ++d) {
    if (!mask[static_cast<size_t>(d)]) continue;
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(shape.dim(d)));
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < shape.dim(d); ++i) next.push_back(base + i * strides[static_cast<size_t>(d)]);
    }
    offsets = std::move(next);
  }
  return offsets;
}

Result<PreparedOp> PrepareReduce(const OpPrepareArgs& args, ReduceKind kind, bool axes_from_input, const char* name) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, axes_from_input ? 2 : 1));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  const Shape& x = args.inputs[0].shape;
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(int64_t keepdims, at.GetInt("keepdims", 1));
  OCTET_ASSIGN_OR_RETURN(int64_t noop_empty, at.GetInt("noop_with_empty_axes", 0));
  std::vector<int64_t> axes;
  if (axes_from_input) {
    if (Present(args, 1)) {
      OCTET_ASSIGN_OR_RETURN(axes, ConstantInts(args, 1, "axes"));
    }
  } else {
    OCTET_ASSIGN_OR_RETURN(axes, at.GetInts("axes", {}));
  }
  OCTET_ASSIGN_OR_RETURN(std::vector<int> norm, NormalizeAxes(axes, x.rank()));
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), axes.empty() && noop_empty == 0);
  for (int a : norm) reduced[static_cast<size_t>(a)] = true;
  std::vector<int64_t> out_dims;
  for (int d = 0; d < x.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) {
      out_dims.push_back(x.dim(d));
    } else if (keepdims) {
      out_dims.push_back(1);
    }
  }
  std::vector<bool> kept(reduced.size());
  for (size_t d = 0; d < reduced.size(); ++d) kept[d] = !reduced[d];
  const std::vector<int64_t> base = Offsets(x, kept);
  const std::vector<int64_t> offsets = Offsets(x, reduced);
  const int64_t count = static_cast<int64_t>(offsets.size());
  if (count == 0 && (kind == ReduceKind::kMax || kind == ReduceKind::kMin)) {
    return InvalidArgument("cannot take the {} of an empty set", kind == ReduceKind::kMax ? "max" : "min");
  }
  // The reduced positions of one output are one contiguous run (trailing axes: a row mean or sum).
  bool contiguous = kind == ReduceKind::kMean || kind == ReduceKind::kSum;
  for (int64_t k = 0; contiguous && k < count; ++k) contiguous = offsets[static_cast<size_t>(k)] == k;
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const float* px = r.inputs[0].data<float>();
    float* py = r.outputs[0].data<float>();
    if (contiguous && count > 0) {
      ParallelFor(r.context, static_cast<int64_t>(base.size()), std::max<int64_t>(1, 4096 / count),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t o = begin; o < end; ++o) {
                      const double s = ContiguousSum(px + base[static_cast<size_t>(o)], count);
                      py[o] = static_cast<float>(kind == ReduceKind::kMean ? s / static_cast<double>(count) : s);
                    }
                  });
      return OkStatus();
    }
    ParallelFor(r.context, static_cast<int64_t>(base.size()), std::max<int64_t>(1, 4096 / std::max<int64_t>(count, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t o = begin; o < end; ++o) {
                    const float* xb = px + base[static_cast<size_t>(o)];
                    if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) {
                      float m = xb[offsets[0]];
                      for (int64_t k = 1; k < count; ++k) {
                        const float v = xb[offsets[static_cast<size_t>(k)]];
                        m = kind == ReduceKind::kMax ? std::max(m, v) : std::min(m, v);
                      }
                      py[o] = m;
                    } else {
                      py[o] = static_cast<float>(
                          Accumulate(kind, count, [&](int64_t k) { return xb[offsets[static_cast<size_t>(k)]]; }));
                    }
                  }
                });
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, Shape(out_dims)}}, std::move(kernel), fmt::format("{}_f32", name));
}

}  // namespace

Status RegisterReduceOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kReduceMean, [](const OpPrepareArgs& a) {
    return PrepareReduce(a, ReduceKind::kMean, false, "reduce_mean");
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kReduceSum, [](const OpPrepareArgs& a) {
    return PrepareReduce(a, ReduceKind::kSum, true, "reduce_sum");
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kReduceMax, [](const OpPrepareArgs& a) {
    return PrepareReduce(a, ReduceKind::kMax, false, "reduce_max");
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kReduceMin, [](const OpPrepareArgs& a) {
    return PrepareReduce(a, ReduceKind::kMin, false, "reduce_min");
  }));
  // The rest of ONNX's reductions (axes an attribute, as io/onnx/opset_adapters.cc reads opset 18's axes input).
  const std::pair<FloatOp, ReduceKind> more[] = {
      {FloatOp::kReduceProd, ReduceKind::kProd},     {FloatOp::kReduceL1, ReduceKind::kL1},
      {FloatOp::kReduceL2, ReduceKind::kL2},         {FloatOp::kReduceSumSquare, ReduceKind::kSumSquare},
      {FloatOp::kReduceLogSum, ReduceKind::kLogSum}, {FloatOp::kReduceLogSumExp, ReduceKind::kLogSumExp}};
  for (const auto& [op, kind] : more) {
    const std::string kernel = "reduce_" + std::string(FloatOpName(op).substr(6));
    OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, op, [kind = kind, kernel](const OpPrepareArgs& a) {
      return PrepareReduce(a, kind, false, kernel.c_str());
    }));
  }
  return OkStatus();
}

}  // namespace octet::float_ops
