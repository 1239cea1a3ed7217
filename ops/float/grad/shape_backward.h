// Backward of the operators that only move data: Concat (the gradient split along the axis) and the views Flatten,
// Reshape, Squeeze, Unsqueeze, Identity and inference-mode Dropout (the gradient reshaped back).
#pragma once

#include "ops/float/grad/backward.h"

namespace octet::float_ops {

Status RegisterShapeBackward(BackwardRegistry& registry);

}  // namespace octet::float_ops
