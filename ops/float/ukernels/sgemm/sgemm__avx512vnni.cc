// AVX-512 sgemm kernel (avx512vnni tier; uses AVX-512F only): 8x32 register tile, 16 zmm accumulators, packed
// panels in the workspace (ops/float/ukernels/sgemm/sgemm_packed.h).
#include "ops/float/ukernels/sgemm/sgemm_packed.h"

namespace octet::float_ops {

void sgemm_f32_ukernel_8x32__avx512vnni(const SgemmBlockArgs& args) {
  sgemm_packed::Block<xsimd::avx512f, 8, 32>(args);
}

}  // namespace octet::float_ops
