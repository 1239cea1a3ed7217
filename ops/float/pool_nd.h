// MaxPool and AveragePool over any number of spatial axes (1-D to 3-D), for
// what ops/float/pool.cc's 1-D/2-D f32 kernel does not cover: 3-D windows,
// MaxPool's Indices output and MaxPool of u8 / s8 tensors.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// The ONNX MaxPool (is_max) or AveragePool of input 0 ([N, C, D1, ..., Dk], k =
// 1 to 3): kernel_shape, strides, dilations, pads, auto_pad, ceil_mode,
// count_include_pad as in ONNX; storage_order 0 only. MaxPool reads f32, u8 and
// s8 and writes its Indices output (flat row-major indices into X, as s32 for
// ONNX's int64) when the node has one.
Result<PreparedOp> PrepareNdPool(const OpPrepareArgs& args, bool is_max);

}  // namespace octet::float_ops
