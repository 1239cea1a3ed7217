// The min/max family's candidate list, built from minmax.inc, and its selection.
#include <vector>

#include "observers/kernels/minmax.h"

namespace octet {

std::span<const UkernelEntry<MinMaxUkernelFn>> MinMaxUkernels() {
  static const std::vector<UkernelEntry<MinMaxUkernelFn>> list = {
#define OCTET_MINMAX_UKERNEL(isa, fn) {Isa::isa, #fn, &fn},
#include "observers/kernels/minmax.inc"
#undef OCTET_MINMAX_UKERNEL
  };
  return list;
}

const UkernelEntry<MinMaxUkernelFn>& SelectMinMaxUkernel(const Context& context) {
  const auto& entry = SelectUkernel(context, MinMaxUkernels());
  static const KernelFamily kFamily("minmax_f32");
  context.RecordKernel(kFamily, entry.name);
  return entry;
}

}  // namespace octet
