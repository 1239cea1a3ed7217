// Requantize over tensors: int32 accumulators (last dimension = output channel) to u8 / s8 in the fp32 or q31
// scheme (DESIGN.md §4; spec ops/reference/requantize_reference.h).
#pragma once

#include <vector>

#include "core/context.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

enum class RequantizeScheme { kFp32, kQ31 };
const char* RequantizeSchemeName(RequantizeScheme scheme);  // "fp32", "q31"

struct RequantizeSpec {
  RequantizeScheme scheme = RequantizeScheme::kFp32;
  DType output_dtype = DType::kU8;  // u8 or s8
  // Real multipliers (a_scale * w_scale[c] / y_scale): one, or one per output channel (the last dimension).
  // fp32 uses float(m); q31 uses QuantizeMultiplier(m). Each must be finite and > 0.
  std::vector<double> multipliers;
  int32_t zero_point = 0;
  // Clamp bounds inside the output dtype; a fused ReLU is lo = zero_point, ReLU6 also lowers hi.
  int32_t lo = 0;
  int32_t hi = 255;
};

// Fails on a non-s32 input, a rank-0 input, multipliers that are not one per channel, or bounds outside the dtype.
Result<Tensor> Requantize(const Context& context, const Tensor& acc, const RequantizeSpec& spec);

}  // namespace octet
