// The QSoftmax u8 -> u8 family's candidate list, built from qsoftmax.inc.
#include <vector>

#include "ops/ukernels/qsoftmax.h"

namespace octet {

std::span<const UkernelEntry<QSoftmaxU8UkernelFn>> QSoftmaxU8Ukernels() {
  static const std::vector<UkernelEntry<QSoftmaxU8UkernelFn>> list = [] {
    std::vector<UkernelEntry<QSoftmaxU8UkernelFn>> v;
#define OCTET_QSOFTMAX_UKERNEL(isa, fn) v.push_back({Isa::isa, #fn, &fn});
#include "ops/ukernels/qsoftmax.inc"
#undef OCTET_QSOFTMAX_UKERNEL
    return v;
  }();
  return list;
}

}  // namespace octet
