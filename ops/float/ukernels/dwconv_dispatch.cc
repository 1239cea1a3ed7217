// The float depthwise family's candidate list, built from dwconv.inc.
#include <vector>

#include "ops/float/ukernels/dwconv.h"

namespace octet::float_ops {

std::span<const UkernelEntry<DwconvPlaneFn>> DwconvUkernels() {
  static const std::vector<UkernelEntry<DwconvPlaneFn>> list = {
#define OCTET_DWCONV_UKERNEL(isa, fn) {Isa::isa, #fn, &fn},
#include "ops/float/ukernels/dwconv.inc"
#undef OCTET_DWCONV_UKERNEL
  };
  return list;
}

}  // namespace octet::float_ops
