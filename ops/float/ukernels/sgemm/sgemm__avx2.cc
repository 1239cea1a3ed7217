// AVX2 + FMA sgemm kernel: 6x16 register tile, 12 ymm accumulators, packed panels in the workspace
// (ops/float/ukernels/sgemm/sgemm_packed.h).
#include "ops/float/ukernels/sgemm/sgemm_packed.h"

namespace octet::float_ops {

void sgemm_f32_ukernel_6x16__avx2(const SgemmBlockArgs& args) {
  sgemm_packed::Block<xsimd::fma3<xsimd::avx2>, 6, 16>(args);
}

}  // namespace octet::float_ops
