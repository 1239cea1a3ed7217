// Operators whose output is known from attributes or shapes alone (and so is folded at Compile): Constant (value,
// value_float(s), value_int(s)), ConstantOfShape (value, default float 0) and Shape (opset 15 start/end; int64 is
// held as s32).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterConstantOps(OpRegistry& registry);

}  // namespace octet::float_ops
