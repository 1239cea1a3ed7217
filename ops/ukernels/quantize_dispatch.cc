// The quantize family's candidate lists, built from quantize.inc.
#include <type_traits>
#include <vector>

#include "ops/ukernels/quantize.h"

namespace octet {

template <typename T>
std::span<const UkernelEntry<QuantizeUkernelFn<T>>> QuantizeUkernels() {
  static const std::vector<UkernelEntry<QuantizeUkernelFn<T>>> list = [] {
    std::vector<UkernelEntry<QuantizeUkernelFn<T>>> v;
#define OCTET_QUANTIZE_UKERNEL(isa, out_type, fn) \
  if constexpr (std::is_same_v<T, out_type>) v.push_back({Isa::isa, #fn, &fn});
#include "ops/ukernels/quantize.inc"
#undef OCTET_QUANTIZE_UKERNEL
    return v;
  }();
  return list;
}

template std::span<const UkernelEntry<QuantizeUkernelFn<uint8_t>>> QuantizeUkernels<uint8_t>();
template std::span<const UkernelEntry<QuantizeUkernelFn<int8_t>>> QuantizeUkernels<int8_t>();
template std::span<const UkernelEntry<QuantizeUkernelFn<int32_t>>> QuantizeUkernels<int32_t>();

}  // namespace octet
