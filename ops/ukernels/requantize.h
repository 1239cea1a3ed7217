// The requantize kernel family: int32 accumulators -> u8 / s8 over a [rows x channels] block (channel fastest),
// per-tensor or per-channel, in two schemes that are two families of kernels, never a tolerance:
//   fp32: y = clamp(rne(float(acc) * multiplier[c]) + zero_point, lo, hi)           (XNNPACK / qnnpack / MLAS)
//   q31:  y = clamp(MultiplyByQuantizedMultiplier(acc, multiplier[c], shift[c]) + zero_point, lo, hi) (TFLite)
// Spec: ops/reference/requantize_reference.h. Strides are in elements. No over-read.
// Preconditions (ops/requantize.cc validates): fp32 multipliers finite and > 0; q31 multipliers in [0, 2^31 - 1]
// and shifts in [-31, 30] (QuantizeMultiplier's output); lo <= hi within the output dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/ukernel_list.h"
#include "ops/reference/requantize_reference.h"

namespace octet {

using RequantizeFp32Params = reference::RequantizeFp32Args;
using RequantizeQ31Params = reference::RequantizeQ31Args;

template <typename T>
using RequantizeFp32UkernelFn = void (*)(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y,
                                         size_t y_stride, const RequantizeFp32Params& params);
template <typename T>
using RequantizeQ31UkernelFn = void (*)(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y,
                                        size_t y_stride, const RequantizeQ31Params& params);

#define OCTET_REQUANTIZE_FP32_UKERNEL(isa, out_type, fn)                                                  \
  void fn(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, out_type* y, size_t y_stride, \
          const RequantizeFp32Params& params);
#define OCTET_REQUANTIZE_Q31_UKERNEL(isa, out_type, fn)                                                   \
  void fn(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, out_type* y, size_t y_stride, \
          const RequantizeQ31Params& params);
#include "ops/ukernels/requantize.inc"
#undef OCTET_REQUANTIZE_FP32_UKERNEL
#undef OCTET_REQUANTIZE_Q31_UKERNEL

template <typename T>
std::span<const UkernelEntry<RequantizeFp32UkernelFn<T>>> RequantizeFp32Ukernels();
template <typename T>
std::span<const UkernelEntry<RequantizeQ31UkernelFn<T>>> RequantizeQ31Ukernels();

}  // namespace octet
