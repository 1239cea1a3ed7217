// The quantize kernel family: f32 -> u8 / s8 / s32, per-tensor, over contiguous elements.
//
// Contract (spec: ops/reference/quantize_reference.h, QuantizeValue):
//   y[i] = clamp(zero_point + rne(x[i] * inv_scale), quant_min, quant_max), NaN -> zero_point,
// returning the number of NaN inputs. Kernels read exactly n inputs and write exactly n outputs (tails use masked
// or staged accesses, no over-read).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/ukernel_list.h"

namespace octet {

struct QuantizeParams {
  float inv_scale;  // 1.0f / scale, computed once in float
  int32_t zero_point;
  int32_t quant_min;  // within the output dtype's limits, quant_min <= zero_point <= quant_max
  int32_t quant_max;
  // Write with non-temporal stores where the output is suitably aligned (for outputs larger than the caches:
  // saves the read-for-ownership traffic). Never changes a value.
  bool stream_stores = false;
};

template <typename T>
using QuantizeUkernelFn = size_t (*)(size_t n, const float* x, T* y, const QuantizeParams& params);

#define OCTET_QUANTIZE_UKERNEL(isa, out_type, fn) \
  size_t fn(size_t n, const float* x, out_type* y, const QuantizeParams& params);
#include "ops/ukernels/quantize.inc"
#undef OCTET_QUANTIZE_UKERNEL

// Candidates for output type T (uint8_t, int8_t, int32_t), best first, scalar last.
template <typename T>
std::span<const UkernelEntry<QuantizeUkernelFn<T>>> QuantizeUkernels();

}  // namespace octet
