// The byte lookup family's candidate list, built from lut.inc.
#include <vector>

#include "ops/ukernels/lut.h"

namespace octet {

std::span<const UkernelEntry<LutUkernelFn>> LutUkernels() {
  static const std::vector<UkernelEntry<LutUkernelFn>> list = [] {
    std::vector<UkernelEntry<LutUkernelFn>> v;
#define OCTET_LUT_UKERNEL(isa, fn) v.push_back({Isa::isa, #fn, &fn});
#include "ops/ukernels/lut.inc"
#undef OCTET_LUT_UKERNEL
    return v;
  }();
  return list;
}

}  // namespace octet
