// The requantize families' candidate lists, built from requantize.inc.
#include <type_traits>
#include <vector>

#include "ops/ukernels/requantize.h"

namespace octet {

template <typename T>
std::span<const UkernelEntry<RequantizeFp32UkernelFn<T>>> RequantizeFp32Ukernels() {
  static const std::vector<UkernelEntry<RequantizeFp32UkernelFn<T>>> list = [] {
    std::vector<UkernelEntry<RequantizeFp32UkernelFn<T>>> v;
#define OCTET_REQUANTIZE_FP32_UKERNEL(isa, out_type, fn) \
  if constexpr (std::is_same_v<T, out_type>) v.push_back({Isa::isa, #fn, &fn});
#define OCTET_REQUANTIZE_Q31_UKERNEL(isa, out_type, fn)
#include "ops/ukernels/requantize.inc"
#undef OCTET_REQUANTIZE_FP32_UKERNEL
#undef OCTET_REQUANTIZE_Q31_UKERNEL
    return v;
  }();
  return list;
}

template <typename T>
std::span<const UkernelEntry<RequantizeQ31UkernelFn<T>>> RequantizeQ31Ukernels() {
  static const std::vector<UkernelEntry<RequantizeQ31UkernelFn<T>>> list = [] {
    std::vector<UkernelEntry<RequantizeQ31UkernelFn<T>>> v;
#define OCTET_REQUANTIZE_FP32_UKERNEL(isa, out_type, fn)
#define OCTET_REQUANTIZE_Q31_UKERNEL(isa, out_type, fn) \
  if constexpr (std::is_same_v<T, out_type>) v.push_back({Isa::isa, #fn, &fn});
#include "ops/ukernels/requantize.inc"
#undef OCTET_REQUANTIZE_FP32_UKERNEL
#undef OCTET_REQUANTIZE_Q31_UKERNEL
    return v;
  }();
  return list;
}

template std::span<const UkernelEntry<RequantizeFp32UkernelFn<uint8_t>>> RequantizeFp32Ukernels<uint8_t>();
template std::span<const UkernelEntry<RequantizeFp32UkernelFn<int8_t>>> RequantizeFp32Ukernels<int8_t>();
template std::span<const UkernelEntry<RequantizeQ31UkernelFn<uint8_t>>> RequantizeQ31Ukernels<uint8_t>();
template std::span<const UkernelEntry<RequantizeQ31UkernelFn<int8_t>>> RequantizeQ31Ukernels<int8_t>();

}  // namespace octet
