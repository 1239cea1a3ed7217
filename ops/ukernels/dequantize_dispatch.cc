// The dequantize family's candidate lists, built from dequantize.inc.
#include <type_traits>
#include <vector>

#include "ops/ukernels/dequantize.h"

namespace octet {

template <typename T>
std::span<const UkernelEntry<DequantizeUkernelFn<T>>> DequantizeUkernels() {
  static const std::vector<UkernelEntry<DequantizeUkernelFn<T>>> list = [] {
    std::vector<UkernelEntry<DequantizeUkernelFn<T>>> v;
#define OCTET_DEQUANTIZE_UKERNEL(isa, in_type, fn) \
  if constexpr (std::is_same_v<T, in_type>) v.push_back({Isa::isa, #fn, &fn});
#include "ops/ukernels/dequantize.inc"
#undef OCTET_DEQUANTIZE_UKERNEL
    return v;
  }();
  return list;
}

template std::span<const UkernelEntry<DequantizeUkernelFn<uint8_t>>> DequantizeUkernels<uint8_t>();
template std::span<const UkernelEntry<DequantizeUkernelFn<int8_t>>> DequantizeUkernels<int8_t>();
template std::span<const UkernelEntry<DequantizeUkernelFn<int32_t>>> DequantizeUkernels<int32_t>();

}  // namespace octet
