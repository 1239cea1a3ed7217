// Operators that change only the shape, for any dtype: Reshape (0 copies a dim unless allowzero, -1 is inferred),
// Flatten, Squeeze, Unsqueeze (axes as constant inputs, opset 13), Identity and Dropout (inference: identity with an
// all-true mask; training mode drops with numpy's seeded MT19937 draws, as ONNX's reference does).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterReshapeOps(OpRegistry& registry);

}  // namespace octet::float_ops
