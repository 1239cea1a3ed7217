// PRelu and Mod over broadcast plans (ops/float/nary_broadcast.h).
#include "ops/float/binary_math.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

Result<PreparedOp> PreparePRelu(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const ValueInfo& x = args.inputs[0];
  const ValueInfo& slope = args.inputs[1];
  if (x.dtype != DType::kF32 && x.dtype != DType::kS32)
    return InvalidArgument("PRelu supports f32 and s32, got {}", x.dtype);
  if (slope.dtype != x.dtype) {
    return InvalidArgument("input 1 (slope) must have X's dtype {}, got {}", x.dtype, slope.dtype);
  }
  for (size_t i : {0, 1}) OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, i));
  Result<Shape> out = BroadcastShapes(x.shape, slope.shape);
  if (!out.ok() || *out != x.shape) {
    // A per-channel slope of shape [C] against NCHW is a common exporter mistake: ONNX aligns trailing dims.
    return InvalidArgument(
        "slope shape {} must broadcast to X's shape {} (trailing dims aligned, as numpy does; a "
        "per-channel slope of NCHW data has shape [C, 1, 1])",
        slope.shape, x.shape);
  }
  const Shape shapes[] = {x.shape, slope.shape};
  NaryPlan plan = PlanNary(shapes, x.shape);
  const DType dtype = x.dtype;
  auto kernel = MakeKernel([plan, dtype](const OpRunArgs& r) -> Status {
    if (dtype == DType::kF32) {
      BroadcastBinary(
          r.context, plan, [](float v, float s) { return v < 0.0f ? v * s : v; }, r.inputs[0].data<float>(),
          r.inputs[1].data<float>(), r.outputs[0].data<float>());
    } else {
      // s32 stands for ONNX int64 too; the product saturates as octet's integer Mul does.
      BroadcastBinary(
          r.context, plan,
          [](int32_t v, int32_t s) -> int32_t {
            if (v >= 0) return v;
            return static_cast<int32_t>(std::clamp<int64_t>(int64_t{v} * s, INT32_MIN, INT32_MAX));
          },
          r.inputs[0].data<int32_t>(), r.inputs[1].data<int32_t>(), r.outputs[0].data<int32_t>());
    }
    return OkStatus();
  });
  return MakePrepared({{dtype, x.shape}}, std::move(kernel), fmt::format("prelu_{}", DTypeName(dtype)));
}

template <typename T>
T IntegerMod(T a, T b, bool fmod) {
  // In int64 so that INT_MIN % -1 cannot trap.
  int64_t r = int64_t{a} % int64_t{b};
  if constexpr (std::is_signed_v<T>) {
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  }
  return static_cast<T>(r);
}

Result<PreparedOp> PrepareMod(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const ValueInfo& a = args.inputs[0];
  const ValueInfo& b = args.inputs[1];
  if (a.dtype != b.dtype) return InvalidArgument("inputs A and B must have one dtype, got {} and {}", a.dtype, b.dtype);
  for (size_t i : {0, 1}) OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, i));
  OCTET_ASSIGN_OR_RETURN(int64_t fmod, args.node.attributes.GetInt("fmod", 0));
  if (fmod != 0 && fmod != 1) return InvalidArgument("attribute 'fmod' must be 0 or 1, got {}", fmod);
  if (a.dtype == DType::kF32 && fmod == 0) {
    return InvalidArgument(
        "attribute 'fmod' must be 1 for float inputs (ONNX defines Mod of floats only as C's fmod), "
        "got 0");
  }
  OCTET_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(a.shape, b.shape));
  const Shape shapes[] = {a.shape, b.shape};
  NaryPlan plan = PlanNary(shapes, out);
  const DType dtype = a.dtype;
  const bool c_fmod = fmod == 1;
  auto kernel = MakeKernel([plan, dtype, c_fmod](const OpRunArgs& r) -> Status {
    if (r.outputs[0].NumElements() == 0) return OkStatus();
    return VisitDType(dtype, [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* x = r.inputs[0].data<T>();
      const T* y = r.inputs[1].data<T>();
      T* z = r.outputs[0].data<T>();
      if constexpr (std::is_same_v<T, float>) {
        BroadcastBinary(
            r.context, plan, [](float p, float q) { return std::fmod(p, q); }, x, y, z);
      } else {
        for (int64_t i = 0; i < r.inputs[1].NumElements(); ++i) {
          if (y[i] == 0) return InvalidArgument("integer Mod by zero at divisor element {}", i);
        }
        if (c_fmod) {
          BroadcastBinary(
              r.context, plan, [](T p, T q) { return IntegerMod(p, q, true); }, x, y, z);
        } else {
          BroadcastBinary(
              r.context, plan, [](T p, T q) { return IntegerMod(p, q, false); }, x, y, z);
        }
      }
      return OkStatus();
    });
  });
  return MakePrepared({{dtype, out}}, std::move(kernel),
                      fmt::format("mod_{}{}", DTypeName(dtype), c_fmod ? "_fmod" : ""));
}

}  // namespace

Status RegisterBinaryMathOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kPRelu, PreparePRelu));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kMod, PrepareMod));
  return OkStatus();
}

}  // namespace octet::float_ops
