// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear with run-time qparams (see quantize_linear.h).
#include "ops/float/quantize_linear.h"

#include <algorithm>
#include <cmath>

#include "ops/float/linear_qparams.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

// Where the per-axis qparams of input 0 apply: element e uses channel (e / inner) % channels.
struct AxisPlan {
  int64_t channels = 1;  // 1: per tensor
  int64_t inner = 1;
};

// The axis rules shared by QuantizeLinear and DequantizeLinear: a scale of one element is per tensor; a 1-D scale
// is per axis along `axis` (default 1, negative counts from the end).
Result<AxisPlan> PlanAxis(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 3));
  OCTET_ASSIGN_OR_RETURN(int64_t block, args.node.attributes.GetInt("block_size", 0));
  if (block != 0) {
    return Unimplemented("block_size {} (opset 21's blocked quantization) is not supported; use per-axis scales",
                         block);
  }
  const ValueInfo& x = args.inputs[0];
  const ValueInfo& scale = args.inputs[1];
  AxisPlan p;
  if (scale.shape.rank() == 1 && scale.shape.NumElements() != 1) {
    OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, args.node.attributes.GetInt("axis", 1));
    OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, x.shape.rank()));
    p.channels = x.shape.dim(axis);
    for (int d = axis + 1; d < x.shape.rank(); ++d) p.inner *= x.shape.dim(d);
  }
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 1, "scale", true, p.channels));
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 2, "zero_point", false, p.channels, /*allow_s32=*/true));
  return p;
}

Result<PreparedOp> PrepareQuantizeLinear(const OpPrepareArgs& args) {
  OCTET_ASSIGN_OR_RETURN(AxisPlan p, PlanAxis(args));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  DType out = DType::kU8;
  if (Present(args, 2)) {
    out = args.inputs[2].dtype;
    if (out == DType::kS32) return InvalidArgument("input 2 (y_zero_point) must be uint8 or int8, got s32");
  } else {
    // Opset 21: output_dtype picks the type when there is no zero point (ONNX TensorProto codes: 2 uint8, 3 int8).
    OCTET_ASSIGN_OR_RETURN(int64_t code, args.node.attributes.GetInt("output_dtype", 0));
    if (code == 3) {
      out = DType::kS8;
    } else if (code != 0 && code != 2) {
      return Unimplemented("output_dtype {} is not supported (octet quantizes to uint8 (2) and int8 (3))", code);
    }
  }
  auto kernel = MakeKernel([p, out](const OpRunArgs& r) -> Status {
    const ConstTensorView& x = r.inputs[0];
    const ConstTensorView& s = r.inputs[1];
    const ConstTensorView& z = r.inputs.size() > 2 ? r.inputs[2] : ConstTensorView();
    const float* xd = x.data<float>();
    const int64_t n = x.NumElements();
    const int32_t lo = QMin(out), hi = QMax(out);
    for (int64_t e = 0; e < n; ++e) {
      const int64_t c = p.channels == 1 ? 0 : (e / p.inner) % p.channels;
      const int32_t q = QuantizeLinearValue(xd[e], FloatAt(s, c), IntAtOrOnly(z, c), lo, hi);
      if (out == DType::kU8) {
        r.outputs[0].data<uint8_t>()[e] = static_cast<uint8_t>(q);
      } else {
        r.outputs[0].data<int8_t>()[e] = static_cast<int8_t>(q);
      }
    }
    return OkStatus();
  });
  return MakePrepared({{out, args.inputs[0].shape}}, std::move(kernel),
                      fmt::format("quantize_linear_f32_{}", DTypeName(out)));
}

Result<PreparedOp> PrepareDequantizeLinear(const OpPrepareArgs& args) {
  OCTET_ASSIGN_OR_RETURN(AxisPlan p, PlanAxis(args));
  const DType in = args.inputs[0].dtype;
  if (in == DType::kF32) return InvalidArgument("input 0 (x) must be uint8, int8 or int32, got f32");
  if (Present(args, 2) && args.inputs[2].dtype != in) {
    return InvalidArgument("input 2 (x_zero_point) has dtype {} but x has {}; they must match", args.inputs[2].dtype,
                           in);
  }
  auto kernel = MakeKernel([p, in](const OpRunArgs& r) -> Status {
    const ConstTensorView& x = r.inputs[0];
    const ConstTensorView& s = r.inputs[1];
    const ConstTensorView& z = r.inputs.size() > 2 ? r.inputs[2] : ConstTensorView();
    float* y = r.outputs[0].data<float>();
    const int64_t n = x.NumElements();
    for (int64_t e = 0; e < n; ++e) {
      const int64_t c = p.channels == 1 ? 0 : (e / p.inner) % p.channels;
      // ONNX's order: both operands to float, then subtract, then scale (exact for 8-bit values).
      y[e] = (static_cast<float>(IntAt(x, e)) - static_cast<float>(IntAtOrOnly(z, c))) * FloatAt(s, c);
    }
    (void)in;
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, args.inputs[0].shape}}, std::move(kernel),
                      fmt::format("dequantize_linear_{}_f32", DTypeName(in)));
}

Result<PreparedOp> PrepareDynamicQuantizeLinear(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1, 3, 3));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  auto kernel = MakeKernel([](const OpRunArgs& r) -> Status {
    const float* x = r.inputs[0].data<float>();
    const int64_t n = r.inputs[0].NumElements();
    float lo = 0.0f, hi = 0.0f;  // the range always includes 0
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(x[i])) {
        return InvalidArgument("input '{}' has NaN at index {}; DynamicQuantizeLinear needs finite values", "x", i);
      }
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    float scale = (hi - lo) / 255.0f;
    int32_t zp = 0;
    if (scale == 0.0f) {
      scale = 1.0f;  // all zeros: any scale represents them; ONNX Runtime uses 1
    } else {
      zp = QuantizeLinearValue(0.0f - lo / scale, 1.0f, 0, 0, 255);
    }
    uint8_t* y = r.outputs[0].data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<uint8_t>(QuantizeLinearValue(x[i], scale, zp, 0, 255));
    r.outputs[1].data<float>()[0] = scale;
    r.outputs[2].data<uint8_t>()[0] = static_cast<uint8_t>(zp);
    return OkStatus();
  });
  return MakePrepared({{DType::kU8, args.inputs[0].shape}, {DType::kF32, Shape()}, {DType::kU8, Shape()}},
                      std::move(kernel), "dynamic_quantize_linear_f32_u8");
}

}  // namespace

Status RegisterQuantizeLinearOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kQuantizeLinear, PrepareQuantizeLinear));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kDequantizeLinear, PrepareDequantizeLinear));
  return RegisterFloatOp(registry, FloatOp::kDynamicQuantizeLinear, PrepareDynamicQuantizeLinear);
}

}  // namespace octet::float_ops
