// Scalar quantize kernels: the portable fallback, the reference's array loop behind the family's signature.
#include "ops/reference/quantize_reference.h"
#include "ops/ukernels/quantize.h"

namespace octet {

size_t quantize_f32_u8_ukernel__scalar(size_t n, const float* x, uint8_t* y, const QuantizeParams& p) {
  return reference::QuantizeF32U8(n, x, y, p.inv_scale, p.zero_point, p.quant_min, p.quant_max);
}
size_t quantize_f32_s8_ukernel__scalar(size_t n, const float* x, int8_t* y, const QuantizeParams& p) {
  return reference::QuantizeF32S8(n, x, y, p.inv_scale, p.zero_point, p.quant_min, p.quant_max);
}
size_t quantize_f32_s32_ukernel__scalar(size_t n, const float* x, int32_t* y, const QuantizeParams& p) {
  return reference::QuantizeF32S32(n, x, y, p.inv_scale, p.zero_point, p.quant_min, p.quant_max);
}

}  // namespace octet
