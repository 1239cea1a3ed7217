// Broadcasting binary arithmetic: the output is walked as an outer loop (an odometer over broadcast strides) around
// the longest inner run in which each operand is either contiguous or a single repeated element.
#include "ops/float/binary.h"

#include <algorithm>
#include <cmath>

#include "core/threading.h"
#include "ops/float/op_util.h"

namespace octet::float_ops {
namespace {

enum class BinaryKind { kAdd, kSub, kMul, kDiv, kPow };

// How the output is walked: outer index -> operand offsets; an inner run of `inner` elements in which operand x
// advances by step_x (0 or 1).
struct BroadcastPlan {
  int64_t outer = 1, inner = 1;
  int64_t step_a = 1, step_b = 1;
  std::vector<int64_t> outer_dims, outer_stride_a, outer_stride_b;
};

BroadcastPlan PlanBroadcast(const Shape& a, const Shape& b, const Shape& out) {
  BroadcastPlan p;
  const std::vector<int64_t> sa = BroadcastStrides(a, out), sb = BroadcastStrides(b, out);
  // Classify dims from the innermost: each operand is "full" (stride follows out) or "repeated" (stride 0).
  int split = out.rank();
  int mode_a = -1, mode_b = -1;  // -1 undecided, 0 repeated, 1 full
  int64_t expect_a = 1, expect_b = 1;
  while (split > 0) {
    const int d = split - 1;
    const int64_t n = out.dim(d);
    if (n != 1) {
      const int ma = sa[static_cast<size_t>(d)] == 0 ? 0 : 1;
      const int mb = sb[static_cast<size_t>(d)] == 0 ? 0 : 1;
      if ((mode_a != -1 && ma != mode_a) || (mode_b != -1 && mb != mode_b)) break;
      if (ma == 1 && sa[static_cast<size_t>(d)] != expect_a) break;
      if (mb == 1 && sb[static_cast<size_t>(d)] != expect_b) break;
      mode_a = ma;
      mode_b = mb;
      if (ma == 1) expect_a *= n;
      if (mb == 1) expect_b *= n;
      p.inner *= n;
    }
    --split;
  }
  p.step_a = mode_a == 0 ? 0 : 1;
  p.step_b = mode_b == 0 ? 0 : 1;
  for (int d = 0; d < split; ++d) {
    if (out.dim(d) == 1) continue;
    p.outer_dims.push_back(out.dim(d));
    p.outer_stride_a.push_back(sa[static_cast<size_t>(d)]);
    p.outer_stride_b.push_back(sb[static_cast<size_t>(d)]);
    p.outer *= out.dim(d);
  }
  return p;
}

template <typename T, typename F>
void InnerRun(F f, const T* a, int64_t step_a, const T* b, int64_t step_b, T* y, int64_t n) {
  if (step_a == 1 && step_b == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (step_a == 0 && step_b == 1) {
    const T x = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(x, b[i]);
  } else if (step_a == 1 && step_b == 0) {
    const T z = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], z);
  } else {
    const T v = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

template <typename T, typename F>
void RunBroadcast(const Context& context, const BroadcastPlan& p, F f, const T* a, const T* b, T* y) {
  // Tiles of outer rows holding about 16K elements each.
  const int64_t rows_per_tile = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(p.inner, 1));
  ParallelFor(context, p.outer, rows_per_tile, [&](int64_t begin, int64_t end) {
    const size_t rank = p.outer_dims.size();
    std::vector<int64_t> idx(rank, 0);
    int64_t rem = begin, off_a = 0, off_b = 0;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rem % p.outer_dims[d];
      rem /= p.outer_dims[d];
      off_a += idx[d] * p.outer_stride_a[d];
      off_b += idx[d] * p.outer_stride_b[d];
    }
    for (int64_t row = begin; row < end; ++row) {
      InnerRun(f, a + off_a, p.step_a, b + off_b, p.step_b, y + row * p.inner, p.inner);
      for (size_t d = rank; d-- > 0;) {
        off_a += p.outer_stride_a[d];
        off_b += p.outer_stride_b[d];
        if (++idx[d] < p.outer_dims[d]) break;
        off_a -= p.outer_stride_a[d] * p.outer_dims[d];
        off_b -= p.outer_stride_b[d] * p.outer_dims[d];
        idx[d] = 0;
      }
    }
  });
}

Result<PreparedOp> PrepareBinary(const OpPrepareArgs& args, BinaryKind kind, const char* name) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const ValueInfo& a = args.inputs[0];
  const ValueInfo& b = args.inputs[1];
  if (a.dtype != b.dtype) return InvalidArgument("inputs must have one dtype, got {} and {}", a.dtype, b.dtype);
  const bool integer = a.dtype == DType::kS32;
  if (a.dtype != DType::kF32 && !(integer && kind != BinaryKind::kPow)) {
    return InvalidArgument("{} supports f32{}, got {}", name, kind == BinaryKind::kPow ? "" : " and s32", a.dtype);
  }
  OCTET_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(a.shape, b.shape));
  BroadcastPlan plan = PlanBroadcast(a.shape, b.shape, out);
  const DType dtype = a.dtype;
  auto kernel = MakeKernel([plan, kind, integer](const OpRunArgs& r) -> Status {
    if (r.outputs[0].NumElements() == 0) return OkStatus();
    if (integer) {
      if (kind == BinaryKind::kDiv) {
        const ConstTensorView& d = r.inputs[1];
        for (int64_t i = 0; i < d.NumElements(); ++i) {
          if (d.data<int32_t>()[i] == 0) return InvalidArgument("integer division by zero at divisor element {}", i);
        }
      }
      // Integer arithmetic wraps like the int64 it stands for would not; compute in int64 and saturate.
      auto f = [kind](int32_t x, int32_t y) -> int32_t {
        int64_t v = 0;
        switch (kind) {
          case BinaryKind::kAdd: v = int64_t{x} + y; break;
          case BinaryKind::kSub: v = int64_t{x} - y; break;
          case BinaryKind::kMul: v = int64_t{x} * y; break;
          case BinaryKind::kDiv: v = int64_t{x} / y; break;
          case BinaryKind::kPow: break;
        }
        return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
      };
      RunBroadcast<int32_t>(r.context, plan, f, r.inputs[0].data<int32_t>(), r.inputs[1].data<int32_t>(),
                            r.outputs[0].data<int32_t>());
      return OkStatus();
    }
    const float* x = r.inputs[0].data<float>();
    const float* y = r.inputs[1].data<float>();
    float* z = r.outputs[0].data<float>();
    switch (kind) {
      case BinaryKind::kAdd: RunBroadcast<float>(r.context, plan, [](float p, float q) { return p + q; }, x, y, z); break;
      case BinaryKind::kSub: RunBroadcast<float>(r.context, plan, [](float p, float q) { return p - q; }, x, y, z); break;
      case BinaryKind::kMul: RunBroadcast<float>(r.context, plan, [](float p, float q) { return p * q; }, x, y, z); break;
      case BinaryKind::kDiv: RunBroadcast<float>(r.context, plan, [](float p, float q) { return p / q; }, x, y, z); break;
      case BinaryKind::kPow:
        RunBroadcast<float>(r.context, plan, [](float p, float q) { return q == 2.0f ? p * p : std::pow(p, q); }, x, y, z);
        break;
    }
    return OkStatus();
  });
  return MakePrepared({{dtype, out}}, std::move(kernel), fmt::format("{}_{}_broadcast", name, DTypeName(dtype)));
}

}  // namespace

Status RegisterBinaryOps(OpRegistry& registry) {
  struct Entry {
    const char* op;
    BinaryKind kind;
    const char* name;
  };
  for (const Entry& e : {Entry{"Add", BinaryKind::kAdd, "add"}, Entry{"Sub", BinaryKind::kSub, "sub"},
                         Entry{"Mul", BinaryKind::kMul, "mul"}, Entry{"Div", BinaryKind::kDiv, "div"},
                         Entry{"Pow", BinaryKind::kPow, "pow"}}) {
    OCTET_RETURN_IF_ERROR(registry.Register("", e.op, [e](const OpPrepareArgs& args) {
      return PrepareBinary(args, e.kind, e.name);
    }));
  }
  return OkStatus();
}

}  // namespace octet::float_ops
