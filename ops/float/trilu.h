// Trilu: the upper or lower triangle of the last two dims of a tensor of any
// octet dtype.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// Keeps element (i, j) of each matrix when j - i >= k (upper, the default) or j
// - i <= k (upper = 0) and zeroes the rest; k is the optional scalar input 1 (0
// when absent), read like a shape input.
Status RegisterTriluOps(OpRegistry& registry);

}  // namespace octet::float_ops
