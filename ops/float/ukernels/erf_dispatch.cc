// The float erf family's candidate list, built from erf.inc.
#include <vector>

#include "ops/float/ukernels/erf.h"

namespace octet::float_ops {

std::span<const UkernelEntry<ErfFn>> ErfUkernels() {
  static const std::vector<UkernelEntry<ErfFn>> list = {
#define OCTET_ERF_UKERNEL(isa, fn) {Isa::isa, #fn, &fn},
#include "ops/float/ukernels/erf.inc"
#undef OCTET_ERF_UKERNEL
  };
  return list;
}

}  // namespace octet::float_ops
