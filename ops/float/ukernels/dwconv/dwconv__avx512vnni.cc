// AVX-512 depthwise kernel (avx512vnni tier; uses AVX-512F only): 16-lane vectors over output columns
// (ops/float/ukernels/dwconv/dwconv_rows.h).
#include "ops/float/ukernels/dwconv/dwconv_rows.h"

namespace octet::float_ops {

void dwconv_f32_ukernel__avx512vnni(const DwconvPlaneArgs& args) { dwconv_rows::Plane<xsimd::avx512f>(args); }

}  // namespace octet::float_ops
