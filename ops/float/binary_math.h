// Two more broadcasting binary operators: PRelu (f32, s32) and Mod (f32, u8, s8, s32; fmod both ways).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// PRelu: y = x < 0 ? slope x : x, the slope broadcast to X's shape (unidirectional: the output has X's shape).
// Mod: fmod=0 (the default) takes the sign of the divisor as Python's % does and is for integers only; fmod=1 takes
// the sign of the dividend (C's fmod) and is required for f32. An integer divisor of zero is a run-time error.
Status RegisterBinaryMathOps(OpRegistry& registry);

}  // namespace octet::float_ops
