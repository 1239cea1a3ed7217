// Prepare helpers of the int8 elementwise, pooling, concat, lookup and clamp operators: the per-tensor qparams of
// their activations (inputs and outputs), the fused-activation bounds and the requantization attribute, with errors
// that say which value and what is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/op_registry.h"
#include "core/qparams.h"
#include "core/status.h"
#include "ops/reference/qelementwise_reference.h"

namespace octet::int8_ops {

// One activation's dtype and per-tensor qparams.
struct QActivation {
  DType dtype = DType::kU8;
  float scale = 1.0f;
  int32_t zero_point = 0;
  int32_t quant_min = 0, quant_max = 255;

  reference::QOperand operand() const { return {scale, zero_point}; }
  // Same dtype, scale, zero point and range: codes mean the same real numbers.
  bool SameAs(const QActivation& o) const {
    return dtype == o.dtype && scale == o.scale && zero_point == o.zero_point && quant_min == o.quant_min &&
           quant_max == o.quant_max;
  }
  std::string ToString() const;
};

// "input 1 (B) 'conv1.out'", "output 0 (Y) 'add1'": how errors name a node's value (the executor prefixes the
// node); the name is left out where the caller gave none.
std::string InputLabel(const OpPrepareArgs& args, size_t slot, const char* role);
std::string OutputLabel(const OpPrepareArgs& args, size_t slot, const char* role);

// Input `slot` (named `role` in errors): present, u8 or s8, with per-tensor qparams of its dtype.
Result<QActivation> ReadInputActivation(const OpPrepareArgs& args, size_t slot, const char* role);
// Output `slot`: has per-tensor u8 / s8 qparams (the output's dtype is theirs).
Result<QActivation> ReadOutputActivation(const OpPrepareArgs& args, size_t slot, const char* role);
// Fails unless y's qparams equal x's (operators that move codes without arithmetic: max pools, QClamp).
Status CheckSharedQParams(const QActivation& x, const QActivation& y, std::string_view op);

// The "activation" attribute: "" (default), "Relu" or "Clip". Returns the clamp bounds [lo, hi] of y
// (reference::FusedActivationBounds).
Result<std::pair<int32_t, int32_t>> ReadActivationBounds(const OpPrepareArgs& args, const QActivation& y);

enum class Requantization { kFp32, kQ31, kFbgemm };
// The "requantization" attribute: "fp32" (default), "q31" or "fbgemm".
Result<Requantization> ReadRequantization(const OpPrepareArgs& args);
const char* RequantizationName(Requantization r);

}  // namespace octet::int8_ops
