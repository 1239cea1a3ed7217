// Backward of the broadcasting element-wise binary operators Add, Sub, Mul and Div: each operand's gradient is
// summed over the dimensions it was broadcast along.
#pragma once

#include "ops/float/grad/backward.h"

namespace octet::float_ops {

Status RegisterBinaryBackward(BackwardRegistry& registry);

}  // namespace octet::float_ops
