// Scalar dequantize kernels: the portable fallback, the reference's array loop behind the family's signature.
#include "ops/reference/quantize_reference.h"
#include "ops/ukernels/dequantize.h"

namespace octet {

void dequantize_u8_f32_ukernel__scalar(size_t n, const uint8_t* q, float* y, const DequantizeParams& p) {
  reference::DequantizeU8F32(n, q, y, p.scale, p.zero_point);
}
void dequantize_s8_f32_ukernel__scalar(size_t n, const int8_t* q, float* y, const DequantizeParams& p) {
  reference::DequantizeS8F32(n, q, y, p.scale, p.zero_point);
}
void dequantize_s32_f32_ukernel__scalar(size_t n, const int32_t* q, float* y, const DequantizeParams& p) {
  reference::DequantizeS32F32(n, q, y, p.scale, p.zero_point);
}

}  // namespace octet
