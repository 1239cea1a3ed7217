// The dequantize kernel family: u8 / s8 / s32 -> f32, per-tensor, over contiguous elements.
//
// Contract (spec: ops/reference/quantize_reference.h, DequantizeValue): y[i] = float(q[i] - zero_point) * scale,
// the difference exact (int64), converted with round-to-nearest-even, one float32 multiply. No over-read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/ukernel_list.h"

namespace octet {

struct DequantizeParams {
  float scale;
  int32_t zero_point;
  // Write with non-temporal stores where the output is suitably aligned (see QuantizeParams). Never changes a value.
  bool stream_stores = false;
};

template <typename T>
using DequantizeUkernelFn = void (*)(size_t n, const T* q, float* y, const DequantizeParams& params);

#define OCTET_DEQUANTIZE_UKERNEL(isa, in_type, fn) \
  void fn(size_t n, const in_type* q, float* y, const DequantizeParams& params);
#include "ops/ukernels/dequantize.inc"
#undef OCTET_DEQUANTIZE_UKERNEL

template <typename T>
std::span<const UkernelEntry<DequantizeUkernelFn<T>>> DequantizeUkernels();

}  // namespace octet
