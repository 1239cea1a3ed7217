// Run-time scale and zero-point checks and ONNX's QuantizeLinear value rule.
#include "ops/float/linear_qparams.h"

#include <cmath>

#include "ops/float/op_util.h"

namespace octet::float_ops {

Status CheckQParamInput(const OpPrepareArgs& args, size_t slot, const char* what, bool scale, int64_t count,
                        bool allow_s32) {
  if (!Present(args, slot)) {
    if (scale) return InvalidArgument("input {} ({}) is required", slot, what);
    return OkStatus();
  }
  const ValueInfo& in = args.inputs[slot];
  if (scale && in.dtype != DType::kF32) {
    return InvalidArgument("input {} ({}) must be float32, got {}", slot, what, in.dtype);
  }
  if (!scale && in.dtype != DType::kU8 && in.dtype != DType::kS8 && !(allow_s32 && in.dtype == DType::kS32)) {
    return InvalidArgument("input {} ({}) must be uint8 or int8{}, got {}", slot, what, allow_s32 ? " or int32" : "",
                           in.dtype);
  }
  if (in.shape.rank() > 1 || in.shape.NumElements() != count) {
    return InvalidArgument("input {} ({}) has shape {}; expected {} ({})", slot, what, in.shape,
                           count == 1 ? "a scalar or one element" : fmt::format("[{}]", count),
                           count == 1 ? "per tensor" : "one per channel of the axis");
  }
  return OkStatus();
}

int32_t QuantizeLinearValue(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax) {
  const float v = x / scale;
  if (std::isnan(v)) return zp < qmin ? qmin : zp > qmax ? qmax : zp;
  // rne in double (exact for any float), then the zero point and the saturation, also exact in double.
  const double r = std::nearbyint(static_cast<double>(v)) + zp;
  if (r <= qmin) return qmin;
  if (r >= qmax) return qmax;
  return static_cast<int32_t>(r);
}

}  // namespace octet::float_ops
