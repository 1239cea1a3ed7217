// The fake-quantize kernel family: f32 -> f32 (quantize then dequantize) with the straight-through mask.
//
// Contract (spec: ops/reference/quantize_reference.h, FakeQuantizeValue):
//   qval = float(zero_point) + rne(x * inv_scale); y = (clamp(qval, quant_min, quant_max) - zero_point) * scale;
//   mask = quant_min <= qval <= quant_max (u8 0/1); NaN -> y 0, mask 0. Returns the number of NaN inputs.
// Requires quant_max - quant_min <= 2^24. `mask` may be null. No over-read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/ukernel_list.h"

namespace octet {

struct FakeQuantizeParams {
  float scale;
  float inv_scale;  // 1.0f / scale
  int32_t zero_point;
  int32_t quant_min;
  int32_t quant_max;
};

using FakeQuantizeUkernelFn = size_t (*)(size_t n, const float* x, float* y, uint8_t* mask,
                                         const FakeQuantizeParams& params);

#define OCTET_FAKE_QUANTIZE_UKERNEL(isa, fn) \
  size_t fn(size_t n, const float* x, float* y, uint8_t* mask, const FakeQuantizeParams& params);
#include "ops/ukernels/fake_quantize.inc"
#undef OCTET_FAKE_QUANTIZE_UKERNEL

std::span<const UkernelEntry<FakeQuantizeUkernelFn>> FakeQuantizeUkernels();

}  // namespace octet
