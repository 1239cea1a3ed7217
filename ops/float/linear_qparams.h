// Reading ONNX's run-time quantization parameters (scale and zero-point tensors) for the ops of
// quantize_linear.h and integer_linear.h: their shape checks at Prepare and their values at Run.
#pragma once

#include <cstdint>

#include "core/op_registry.h"
#include "core/status.h"
#include "core/tensor_view.h"

namespace octet::float_ops {

// Element i of an integer tensor (u8, s8 or s32) as int32; 0 for an absent input (a view without data).
inline int32_t IntAt(const ConstTensorView& v, int64_t i) {
  if (v.raw_data() == nullptr) return 0;
  switch (v.dtype()) {
    case DType::kU8: return v.data<uint8_t>()[i];
    case DType::kS8: return v.data<int8_t>()[i];
    case DType::kS32: return v.data<int32_t>()[i];
    case DType::kF32: break;
  }
  return 0;
}

// Element i of a float tensor, or element 0 when it has one element (a per-tensor value read per channel).
inline float FloatAt(const ConstTensorView& v, int64_t i) { return v.data<float>()[v.NumElements() == 1 ? 0 : i]; }
inline int32_t IntAtOrOnly(const ConstTensorView& v, int64_t i) {
  if (v.raw_data() == nullptr) return 0;
  return IntAt(v, v.NumElements() == 1 ? 0 : i);
}

// Fails unless input `slot` (named `what`) is present-or-optional with `count` elements (per tensor: 1), rank 0 or
// 1, and one of the dtypes allowed (`f32` for scales; u8/s8 (and s32 when allow_s32) for zero points).
Status CheckQParamInput(const OpPrepareArgs& args, size_t slot, const char* what, bool scale, int64_t count,
                        bool allow_s32 = false);

// The quantized dtype's range: u8 [0, 255], s8 [-128, 127], s32 the int32 range.
inline int32_t QMin(DType d) { return d == DType::kU8 ? 0 : d == DType::kS8 ? -128 : INT32_MIN; }
inline int32_t QMax(DType d) { return d == DType::kU8 ? 255 : d == DType::kS8 ? 127 : INT32_MAX; }

// saturate(rne(x / scale) + zp) in [qmin, qmax], ONNX QuantizeLinear's formula in float32; NaN gives zp.
int32_t QuantizeLinearValue(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax);

}  // namespace octet::float_ops
