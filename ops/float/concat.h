// Concat and Split along one axis (any dtype). Split's sizes come from its optional constant input (opset 13);
// without it the axis is split evenly over the outputs.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterConcatOps(OpRegistry& registry);

}  // namespace octet::float_ops
