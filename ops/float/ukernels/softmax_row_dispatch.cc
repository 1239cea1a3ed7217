// The float softmax-row family's candidate list, built from softmax_row.inc.
#include <vector>

#include "ops/float/ukernels/softmax_row.h"

namespace octet::float_ops {

std::span<const UkernelEntry<SoftmaxRowFn>> SoftmaxRowUkernels() {
  static const std::vector<UkernelEntry<SoftmaxRowFn>> list = {
#define OCTET_SOFTMAX_ROW_UKERNEL(isa, fn) {Isa::isa, #fn, &fn},
#include "ops/float/ukernels/softmax_row.inc"
#undef OCTET_SOFTMAX_ROW_UKERNEL
  };
  return list;
}

}  // namespace octet::float_ops
