// The transpose family's candidate list, built from transpose.inc.
#include <vector>

#include "ops/ukernels/transpose.h"

namespace octet {

std::span<const UkernelEntry<TransposeBytesUkernelFn>> TransposeBytesUkernels() {
  static const std::vector<UkernelEntry<TransposeBytesUkernelFn>> list = [] {
    std::vector<UkernelEntry<TransposeBytesUkernelFn>> v;
#define OCTET_TRANSPOSE_UKERNEL(isa, fn) v.push_back({Isa::isa, #fn, &fn});
#include "ops/ukernels/transpose.inc"
#undef OCTET_TRANSPOSE_UKERNEL
    return v;
  }();
  return list;
}

}  // namespace octet
