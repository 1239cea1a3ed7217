// Conv over three spatial axes (X [N, C, D, H, W]) by direct loops: what ops/float/conv.cc's 1-D/2-D im2col and
// depthwise kernels do not cover.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// ONNX Conv of f32 X [N, C, D1..Dk] and W [OC, C/group, K1..Kk] (k = 3; any k from 1 works) with an optional B [OC]:
// group, strides, dilations, pads and auto_pad as in ONNX. Each output sums its window in double.
Result<PreparedOp> PrepareConvNd(const OpPrepareArgs& args);

}  // namespace octet::float_ops
