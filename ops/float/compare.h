// Comparisons, logic and selection with numpy broadcasting: Equal, Less, Greater, LessOrEqual, GreaterOrEqual
// (f32, u8, s8, s32 inputs), Not, And, Or, Xor (bool) and Where.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// octet has no bool dtype: ONNX BOOL tensors are imported as u8 holding 0 or 1, so comparisons and logic ops write
// u8 0/1, and logic ops and Where's condition read any nonzero u8 as true. Comparisons with NaN are false (Equal
// included). Where's X and Y share one dtype (any of octet's), which the output takes.
Status RegisterCompareOps(OpRegistry& registry);

}  // namespace octet::float_ops
