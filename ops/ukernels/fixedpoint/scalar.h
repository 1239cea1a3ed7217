// The q31 fixed-point primitives for scalar kernels, under the names the SIMD headers beside this one use
// (avx2.h, avx512.h, neon.h). The scalar tier is the specification itself, so these are the reference's functions:
// a scalar kernel spells the arithmetic the same way a SIMD one does, and there is nothing here to drift.
#pragma once

#include "ops/reference/fixed_point.h"

namespace octet::scalar {

using reference::MultiplyByQuantizedMultiplier;
using reference::RoundingDivideByPOT;
using reference::SaturatingRoundingDoublingHighMul;
using reference::SaturatingShiftLeft;

}  // namespace octet::scalar
