// Variadic kernels: the output is filled from input 0 broadcast to the output shape, then each further input is
// folded into it in place (y = f(y, x_k)), so no temporary is needed whatever the number of inputs.
#include "ops/float/variadic.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

enum class VariadicKind { kMax, kMin, kSum, kMean };

template <typename T>
T MaxOf(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
  }
  return a >= b ? a : b;  // b when b is NaN
}

template <typename T>
T MinOf(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
  }
  return a <= b ? a : b;
}

Result<PreparedOp> PrepareVariadic(const OpPrepareArgs& args, VariadicKind kind, const char* name) {
  if (args.inputs.empty()) return InvalidArgument("needs at least one input, got none");
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, args.inputs.size()));
  const DType dtype = args.inputs[0].dtype;
  const bool float_only = kind == VariadicKind::kSum || kind == VariadicKind::kMean;
  if (float_only && dtype != DType::kF32) {
    return InvalidArgument("{} supports f32 (ONNX allows only float types), got {}", name, dtype);
  }
  std::vector<Shape> shapes;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    if (!Present(args, i)) return InvalidArgument("input {} is omitted; every input of {} is required", i, name);
    if (args.inputs[i].dtype != dtype) {
      return InvalidArgument("every input must have input 0's dtype {}, input {} ('{}') has {}", dtype, i,
                             args.inputs[i].name, args.inputs[i].dtype);
    }
    OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, i));
    shapes.push_back(args.inputs[i].shape);
  }
  OCTET_ASSIGN_OR_RETURN(Shape out, BroadcastAll(shapes));
  // Plans for "copy input 0" and "y = f(y, x_k)", all against the output shape.
  std::vector<NaryPlan> plans;
  plans.push_back(PlanNary(std::span<const Shape>(&shapes[0], 1), out));
  for (size_t i = 1; i < shapes.size(); ++i) {
    const Shape pair[] = {out, shapes[i]};
    plans.push_back(PlanNary(pair, out));
  }
  const float count = static_cast<float>(shapes.size());
  auto kernel = MakeKernel([plans, kind, dtype, count](const OpRunArgs& r) -> Status {
    if (r.outputs[0].NumElements() == 0) return OkStatus();
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      T* y = r.outputs[0].data<T>();
      const T* x0 = r.inputs[0].data<T>();
      const NaryPlan& first = plans[0];
      ForEachNaryRow(r.context, first, [&](int64_t row, const int64_t* off) {
        T* o = y + row * first.inner;
        if (first.inner_step[0] == 1) {
          std::memcpy(o, x0 + off[0], static_cast<size_t>(first.inner) * sizeof(T));
        } else {
          for (int64_t i = 0; i < first.inner; ++i) o[i] = x0[off[0]];
        }
      });
      for (size_t k = 1; k < plans.size(); ++k) {
        const T* x = r.inputs[k].data<T>();
        switch (kind) {
          case VariadicKind::kMax:
            BroadcastBinary(
                r.context, plans[k], [](T a, T b) { return MaxOf(a, b); }, y, x, y);
            break;
          case VariadicKind::kMin:
            BroadcastBinary(
                r.context, plans[k], [](T a, T b) { return MinOf(a, b); }, y, x, y);
            break;
          case VariadicKind::kSum:
          case VariadicKind::kMean:
            BroadcastBinary(
                r.context, plans[k], [](T a, T b) -> T { return static_cast<T>(a + b); }, y, x, y);
            break;
        }
      }
      if constexpr (std::is_same_v<T, float>) {
        if (kind == VariadicKind::kMean) {
          const int64_t n = r.outputs[0].NumElements();
          ParallelFor(r.context, n, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) y[i] /= count;
          });
        }
      }
    });
    return OkStatus();
  });
  return MakePrepared({{dtype, out}}, std::move(kernel), fmt::format("{}_{}", name, DTypeName(dtype)));
}

}  // namespace

Status RegisterVariadicOps(OpRegistry& registry) {
  struct Entry {
    FloatOp op;
    VariadicKind kind;
    const char* name;
  };
  for (const Entry& e :
       {Entry{FloatOp::kMax, VariadicKind::kMax, "max"}, Entry{FloatOp::kMin, VariadicKind::kMin, "min"},
        Entry{FloatOp::kSum, VariadicKind::kSum, "sum"}, Entry{FloatOp::kMean, VariadicKind::kMean, "mean"}}) {
    OCTET_RETURN_IF_ERROR(RegisterFloatOp(
        registry, e.op, [e](const OpPrepareArgs& args) { return PrepareVariadic(args, e.kind, e.name); }));
  }
  return OkStatus();
}

}  // namespace octet::float_ops
