// Op-level specification of QConcat (ops/int8/qconcat_op.h): ONNX Concat of int8 tensors along one axis. An input
// whose qparams equal the output's is copied; any other is requantized element by element with the fp32 rule and
// the multiplier f32(x_scale / y_scale). The operator (through a 256-entry table per input) and the test vectors'
// replay call these.
#pragma once

#include <cstdint>

#include "ops/reference/requantize_reference.h"

namespace octet::reference {

inline float QConcatMultiplier(float x_scale, float y_scale) { return x_scale / y_scale; }

// x (a code of an input with other qparams) in the output's: clamp(rne(f32(x - x_zp) * multiplier) + y_zp, lo, hi),
// lo and hi the output's quant_min and quant_max.
inline int32_t QConcatRequantizeValue(int32_t x, int32_t x_zero_point, float multiplier, int32_t y_zero_point,
                                      int32_t lo, int32_t hi) {
  return RequantizeFp32Value(x - x_zero_point, multiplier, y_zero_point, lo, hi);
}

}  // namespace octet::reference
