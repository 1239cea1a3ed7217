// Variadic element-wise operators with numpy broadcasting over all inputs: Max, Min (f32, u8, s8, s32), Sum, Mean
// (f32).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// One to 2^31 inputs of one dtype. Max and Min propagate NaN (a NaN in any input gives NaN), as numpy's maximum and
// minimum do; Sum adds the inputs in order; Mean is Sum divided by the input count.
Status RegisterVariadicOps(OpRegistry& registry);

}  // namespace octet::float_ops
