// Range: the length is computed at compile time, in int64 for integers and in double for f32 (as ONNX's reference
// does), and element i is start + i * delta.
#include "ops/float/range.h"

#include <algorithm>
#include <cmath>

#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

Result<double> ScalarInput(const OpPrepareArgs& args, size_t slot, const char* what, DType dtype) {
  const ValueInfo& info = args.inputs[slot];
  if (info.dtype != dtype) {
    return InvalidArgument("input {} ({}) must have start's dtype {}, got {}", slot, what, dtype, info.dtype);
  }
  if (info.shape.NumElements() != 1 || info.shape.rank() > 1) {
    return InvalidArgument("input {} ({}) must be a scalar, got shape {}", slot, what, info.shape);
  }
  // It fixes the output length: a value computed at run time makes the executor compile per run.
  auto data = InputData(info);
  if (!data.ok()) return data.status().WithContext(fmt::format("input {} ({})", slot, what));
  if (dtype == DType::kF32) return static_cast<double>((*data)->values<float>()[0]);
  return static_cast<double>((*data)->values<int32_t>()[0]);
}

Result<PreparedOp> PrepareRange(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 3, 3));
  const DType dtype = args.inputs[0].dtype;
  if (dtype != DType::kF32 && dtype != DType::kS32) {
    return InvalidArgument("Range supports f32 and s32 (ONNX int16/int32/int64), got {}", dtype);
  }
  OCTET_ASSIGN_OR_RETURN(double start, ScalarInput(args, 0, "start", dtype));
  OCTET_ASSIGN_OR_RETURN(double limit, ScalarInput(args, 1, "limit", dtype));
  OCTET_ASSIGN_OR_RETURN(double delta, ScalarInput(args, 2, "delta", dtype));
  if (delta == 0.0) return InvalidArgument("input 2 (delta) must not be 0");
  int64_t n = 0;
  if (dtype == DType::kS32) {
    // Exact integer ceil((limit - start) / delta); the operands are int32 so int64 cannot overflow.
    const int64_t span = static_cast<int64_t>(limit) - static_cast<int64_t>(start);
    const int64_t d = static_cast<int64_t>(delta);
    n = span / d + ((span % d != 0) && ((span < 0) == (d < 0)) ? 1 : 0);
  } else {
    const double count = std::ceil((limit - start) / delta);
    if (std::isnan(count)) {
      return InvalidArgument("start {}, limit {} and delta {} give no length", start, limit, delta);
    }
    // Past the element limit (infinity included) the length only needs to fail CheckOutputElements.
    n = count <= 0.0                                       ? 0
        : count > static_cast<double>(Shape::kMaxElements) ? Shape::kMaxElements + 1
                                                           : static_cast<int64_t>(count);
  }
  n = std::max<int64_t>(n, 0);
  const std::vector<int64_t> dims = {n};
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, dims));
  auto kernel = MakeKernel([dtype, start, delta](const OpRunArgs& r) -> Status {
    const int64_t count = r.outputs[0].NumElements();
    if (dtype == DType::kF32) {
      float* y = r.outputs[0].data<float>();
      const float s = static_cast<float>(start), d = static_cast<float>(delta);
      for (int64_t i = 0; i < count; ++i) y[i] = s + static_cast<float>(i) * d;
    } else {
      // Every element lies between start and limit, so it fits in int32.
      int32_t* y = r.outputs[0].data<int32_t>();
      const int64_t s = static_cast<int64_t>(start), d = static_cast<int64_t>(delta);
      for (int64_t i = 0; i < count; ++i) y[i] = static_cast<int32_t>(s + i * d);
    }
    return OkStatus();
  });
  return MakePrepared({{dtype, Shape(dims)}}, std::move(kernel), fmt::format("range_{}", DTypeName(dtype)));
}

}  // namespace

Status RegisterRangeOps(OpRegistry& registry) { return RegisterFloatOp(registry, FloatOp::kRange, PrepareRange); }

}  // namespace octet::float_ops
