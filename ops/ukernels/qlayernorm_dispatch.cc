// The QLayerNorm family's candidate list, built from qlayernorm.inc.
#include <vector>

#include "ops/ukernels/qlayernorm.h"

namespace octet {

std::span<const UkernelEntry<QLayerNormU8UkernelFn>> QLayerNormU8Ukernels() {
  static const std::vector<UkernelEntry<QLayerNormU8UkernelFn>> list = [] {
    std::vector<UkernelEntry<QLayerNormU8UkernelFn>> v;
#define OCTET_QLAYERNORM_UKERNEL(isa, fn) v.push_back({Isa::isa, #fn, &fn});
#include "ops/ukernels/qlayernorm.inc"
#undef OCTET_QLAYERNORM_UKERNEL
    return v;
  }();
  return list;
}

}  // namespace octet
