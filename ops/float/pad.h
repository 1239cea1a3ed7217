// Pad (opset 13, any dtype): pads as a constant input [begin..., end...] (negative values crop), modes constant
// (with the optional constant_value input), reflect and edge.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterPadOps(OpRegistry& registry);

}  // namespace octet::float_ops
