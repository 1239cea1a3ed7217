// Einsum: ONNX's Einstein summation over one or more f32 (or s32) operands.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// The equation's explicit ("ij,jk->ik") and implicit ("ij,jk": the letters used
// once, in alphabetical order) forms, repeated letters in one operand
// (diagonals), and "..." for broadcast leading dims. Each output element sums
// the products over every combination of the letters not in the output, in
// double for f32.
Status RegisterEinsumOps(OpRegistry& registry);

}  // namespace octet::float_ops
