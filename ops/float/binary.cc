// Broadcasting binary arithmetic: the output is walked as an outer loop (an odometer over broadcast strides) around
// the longest inner run in which each operand is either contiguous or a single repeated element.
#include "ops/float/binary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/threading.h"
#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

enum class BinaryKind { kAdd, kSub, kMul, kDiv, kPow };

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
  ForEachBroadcastRow(context, p, rows_per_tile, [&](int64_t row, int64_t off_a, int64_t off_b) {
    InnerRun(f, a + off_a, p.step_a, b + off_b, p.step_b, y + row * p.inner, p.inner);
  });
}

// y = f(a, b) for operands of any dtypes, element by element along each broadcast row.
template <typename A, typename B, typename Y, typename F>
void RunMixed(const Context& context, const BroadcastPlan& p, F f, const A* a, const B* b, Y* y) {
  const int64_t rows_per_tile = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(p.inner, 1));
  ForEachBroadcastRow(context, p, rows_per_tile, [&](int64_t row, int64_t off_a, int64_t off_b) {
    Y* out = y + row * p.inner;
    for (int64_t i = 0; i < p.inner; ++i) out[i] = f(a[off_a + i * p.step_a], b[off_b + i * p.step_b]);
  });
}

// Pow of mixed or integer dtypes (the output takes X's dtype; computed in double, then truncated to an integer X's
// dtype as ONNX's reference does), and Add/Sub/Mul/Div of u8 or s8 tensors (wrapping like ONNX's uint8/int8).
Result<PreparedOp> PrepareGenericBinary(const OpPrepareArgs& args, BinaryKind kind, const char* name) {
  OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, 0));
  OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, 1));
  const ValueInfo& a = args.inputs[0];
  const ValueInfo& b = args.inputs[1];
  if (kind != BinaryKind::kPow && a.dtype != b.dtype) {
    return InvalidArgument("inputs must have one dtype, got {} and {}", a.dtype, b.dtype);
  }
  OCTET_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(a.shape, b.shape));
  const BroadcastPlan plan = PlanBroadcast(a.shape, b.shape, out);
  const DType da = a.dtype, db = b.dtype;
  auto kernel = MakeKernel([plan, kind, da, db](const OpRunArgs& r) -> Status {
    if (r.outputs[0].NumElements() == 0) return OkStatus();
    Status status;
    VisitDType(da, [&](auto ta) {
      using A = decltype(ta);
      VisitDType(db, [&](auto tb) {
        using B = decltype(tb);
        const A* x = r.inputs[0].data<A>();
        const B* y = r.inputs[1].data<B>();
        A* z = r.outputs[0].data<A>();
        if (kind == BinaryKind::kPow) {
          RunMixed(r.context, plan, [](A p, B q) {
            const double v = std::pow(static_cast<double>(p), static_cast<double>(q));
            if constexpr (std::is_same_v<A, float>) {
              return static_cast<float>(v);
            } else {
              if (std::isnan(v)) return A{0};
              return static_cast<A>(std::clamp(v, static_cast<double>(std::numeric_limits<A>::lowest()),
                                               static_cast<double>(std::numeric_limits<A>::max())));
            }
          }, x, y, z);
          return;
        }
        if (kind == BinaryKind::kDiv) {
          for (int64_t i = 0; i < r.inputs[1].NumElements(); ++i) {
            if (y[i] == 0) {
              status = InvalidArgument("integer division by zero at divisor element {}", i);
              return;
            }
          }
        }
        RunMixed(r.context, plan, [kind](A p, B q) {
          const int64_t u = static_cast<int64_t>(p), w = static_cast<int64_t>(q);
          const int64_t v = kind == BinaryKind::kAdd ? u + w : kind == BinaryKind::kSub ? u - w
                          : kind == BinaryKind::kMul ? u * w : u / w;
          return static_cast<A>(v);  // modulo 2^8, as uint8/int8 arithmetic wraps
        }, x, y, z);
      });
    });
    return status;
  });
  return MakePrepared({{da, out}}, std::move(kernel),
                      fmt::format("{}_{}_{}_broadcast", name, DTypeName(da), DTypeName(db)));
}

Result<PreparedOp> PrepareBinary(const OpPrepareArgs& args, BinaryKind kind, const char* name) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const ValueInfo& a = args.inputs[0];
  const ValueInfo& b = args.inputs[1];
  const bool small_int = a.dtype == DType::kU8 || a.dtype == DType::kS8;
  const bool generic_pow = kind == BinaryKind::kPow && (a.dtype != b.dtype || a.dtype != DType::kF32);
  if (generic_pow || (kind != BinaryKind::kPow && small_int && a.qparams == nullptr && b.qparams == nullptr)) {
    return PrepareGenericBinary(args, kind, name);
  }
  if (a.dtype != b.dtype && kind == BinaryKind::kPow) {
    // ONNX lets Pow's exponent have its own type; octet's kernel takes one.
    return Unimplemented("octet's Pow needs X and Y of one dtype (ONNX allows them to differ), got {} and {}: convert "
                         "Y with a Cast node",
                         a.dtype, b.dtype);
  }
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
    FloatOp op;
    BinaryKind kind;
    const char* name;
  };
  for (const Entry& e : {Entry{FloatOp::kAdd, BinaryKind::kAdd, "add"}, Entry{FloatOp::kSub, BinaryKind::kSub, "sub"},
                         Entry{FloatOp::kMul, BinaryKind::kMul, "mul"}, Entry{FloatOp::kDiv, BinaryKind::kDiv, "div"},
                         Entry{FloatOp::kPow, BinaryKind::kPow, "pow"}}) {
    OCTET_RETURN_IF_ERROR(RegisterFloatOp(
        registry, e.op, [e](const OpPrepareArgs& args) { return PrepareBinary(args, e.kind, e.name); }));
  }
  return OkStatus();
}

}  // namespace octet::float_ops
