// qvadd kernels for AVX2 (8 float lanes): qvadd_loop.h's loop, vectorised by the compiler with this ISA's flags.
#include "ops/ukernels/qvadd/qvadd_loop.h"

namespace octet {

void qvadd_u8_minmax_fp32_ukernel__avx2(size_t n, const uint8_t* a, const uint8_t* b, uint8_t* y,
                                      const QVAddParams& p) {
  qvadd_internal::QVAdd<Isa::kAvx2>(n, a, b, y, p);
}
void qvadd_s8_minmax_fp32_ukernel__avx2(size_t n, const int8_t* a, const int8_t* b, int8_t* y,
                                      const QVAddParams& p) {
  qvadd_internal::QVAdd<Isa::kAvx2>(n, a, b, y, p);
}

}  // namespace octet
