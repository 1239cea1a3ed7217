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

// Requantize in one scheme to one output dtype with the kernel chosen once for a context (an operator's Prepare):
// Run selects nothing and records the kernel without a lock. The context Run is given must enable the ISAs of the
// one the plan was made for.
class RequantizePlan {
 public:
  // Fails for an output dtype other than u8 or s8.
  static Result<RequantizePlan> Create(const Context& context, RequantizeScheme scheme, DType output_dtype);
  RequantizeScheme scheme() const { return scheme_; }
  DType output_dtype() const { return output_dtype_; }
  const char* kernel_name() const { return kernel_name_; }  // the ukernel's symbol
  // Requantize with this plan's kernel; spec must have the plan's scheme and output dtype.
  Result<Tensor> Run(const Context& context, const Tensor& acc, const RequantizeSpec& spec) const;

 private:
  friend Result<Tensor> Requantize(const Context&, const Tensor&, const RequantizeSpec&);
  RequantizePlan() = default;
  Result<Tensor> RunChecked(const Context& context, const Tensor& acc, const RequantizeSpec& spec) const;
  RequantizeScheme scheme_ = RequantizeScheme::kFp32;
  DType output_dtype_ = DType::kU8;
  const void* entry_ = nullptr;  // the chosen UkernelEntry of the (scheme, dtype) list (static storage)
  const char* kernel_name_ = "";
};

}  // namespace octet
