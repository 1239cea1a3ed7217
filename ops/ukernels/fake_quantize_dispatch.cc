// The fake-quantize family's candidate list, built from fake_quantize.inc.
#include <vector>

#include "ops/ukernels/fake_quantize.h"

namespace octet {

std::span<const UkernelEntry<FakeQuantizeUkernelFn>> FakeQuantizeUkernels() {
  static const std::vector<UkernelEntry<FakeQuantizeUkernelFn>> list = {
#define OCTET_FAKE_QUANTIZE_UKERNEL(isa, fn) {Isa::isa, #fn, &fn},
#include "ops/ukernels/fake_quantize.inc"
#undef OCTET_FAKE_QUANTIZE_UKERNEL
  };
  return list;
}

}  // namespace octet
