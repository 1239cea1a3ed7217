// Operators that scan one axis: ArgMax, ArgMin (keepdims, select_last_index), CumSum (exclusive, reverse; the axis
// an input), TopK (k an input, largest, sorted), on f32, u8, s8 and s32 (ONNX int64 as s32). Indices are s32.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// TopK's k may be computed at run time (it fixes the output shape). Ties keep the lower index first, as ONNX's
// reference does; NaN compares as the largest value.
Status RegisterAxisScanOps(OpRegistry& registry);

}  // namespace octet::float_ops
