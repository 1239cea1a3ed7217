// AVX2 + FMA depthwise kernel: 8-lane vectors over output columns (ops/float/ukernels/dwconv/dwconv_rows.h).
#include "ops/float/ukernels/dwconv/dwconv_rows.h"

namespace octet::float_ops {

void dwconv_f32_ukernel__avx2(const DwconvPlaneArgs& args) {
  dwconv_rows::Plane<xsimd::fma3<xsimd::avx2>>(args);
}

}  // namespace octet::float_ops
