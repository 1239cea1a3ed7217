// Gather (any data dtype, s32 indices, negative indices count from the end): out = data[:axis] + indices.shape +
// data[axis+1:]. Embedding lookups are Gather on axis 0. An index out of range is a run-time error naming it.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterGatherOps(OpRegistry& registry);

}  // namespace octet::float_ops
