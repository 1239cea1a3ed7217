// The qvadd family's candidate lists, built from qvadd.inc.
#include <type_traits>
#include <vector>

#include "ops/ukernels/qvadd.h"

namespace octet {

template <typename T>
std::span<const UkernelEntry<QVAddUkernelFn<T>>> QVAddUkernels() {
  static const std::vector<UkernelEntry<QVAddUkernelFn<T>>> list = [] {
    std::vector<UkernelEntry<QVAddUkernelFn<T>>> v;
#define OCTET_QVADD_UKERNEL(isa, type, fn) \
  if constexpr (std::is_same_v<T, type>) v.push_back({Isa::isa, #fn, &fn});
#include "ops/ukernels/qvadd.inc"
#undef OCTET_QVADD_UKERNEL
    return v;
  }();
  return list;
}

template std::span<const UkernelEntry<QVAddUkernelFn<uint8_t>>> QVAddUkernels<uint8_t>();
template std::span<const UkernelEntry<QVAddUkernelFn<int8_t>>> QVAddUkernels<int8_t>();

}  // namespace octet
