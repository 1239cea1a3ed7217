// Element-wise unary operators on f32: activations (Relu, Clip, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish,
// Gelu in its erf and tanh forms, Softplus, Elu, Selu) and math functions (Erf, Sqrt, Exp, Log, Neg, Abs,
// Reciprocal, Floor, Ceil, Round, Sin, Cos), Sign (f32, u8, s8, s32), plus Cast between f32, s32, u8 and s8.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// Formulas (x an element, as in the ONNX operator docs):
//   Relu max(x, 0); Clip min(max(x, lo), hi) with lo/hi from inputs 1 and 2 (constant); LeakyRelu x<0 ? alpha x : x;
//   Sigmoid 1 / (1 + exp(-x)); HardSigmoid max(0, min(1, alpha x + beta)); HardSwish x max(0, min(1, x/6 + 1/2));
//   Gelu 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh" 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
//   Softplus log(1 + e^x); Elu x<0 ? alpha (e^x - 1) : x (alpha 1); Selu gamma (x>0 ? x : alpha (e^x - 1)) (alpha
//   1.6733, gamma 1.0507); Round half to even; Sign -1, 0 or 1 (NaN stays NaN, -0 stays -0).
// Cast from f32 to integers rounds half to even and saturates (NaN -> 0), a documented choice where ONNX leaves it
// undefined.
Status RegisterUnaryOps(OpRegistry& registry);

}  // namespace octet::float_ops
