// Scalar fake-quantize kernel: the portable fallback, the reference's array loop behind the family's signature.
#include "ops/reference/quantize_reference.h"
#include "ops/ukernels/fake_quantize.h"

namespace octet {

size_t fake_quantize_f32_ukernel__scalar(size_t n, const float* x, float* y, uint8_t* mask,
                                         const FakeQuantizeParams& p) {
  return reference::FakeQuantizeF32(n, x, y, mask, p.scale, p.inv_scale, p.zero_point, p.quant_min, p.quant_max);
}

}  // namespace octet
