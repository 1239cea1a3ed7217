// Range: the sequence start, start + delta, ... up to (excluding) limit, in f32 or s32.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// start, limit and delta are scalars of one dtype (f32, or s32 for ONNX's integer types) known at compile time,
// since they fix the output length max(ceil((limit - start) / delta), 0). delta 0 is an error.
Status RegisterRangeOps(OpRegistry& registry);

}  // namespace octet::float_ops
