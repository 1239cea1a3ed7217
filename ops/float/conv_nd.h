// Conv and ConvTranspose over three spatial axes (X [N, C, D, H, W]) by direct loops: what ops/float/conv.cc's
// 1-D/2-D im2col, col2im and depthwise kernels do not cover.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/op_registry.h"

namespace octet::float_ops {

// ONNX Conv of f32 X [N, C, D1..Dk] and W [OC, C/group, K1..Kk] (k = 3; any k from 1 works) with an optional B [OC]:
// group, strides, dilations, pads and auto_pad as in ONNX. Each output sums its window in double.
Result<PreparedOp> PrepareConvNd(const OpPrepareArgs& args);

// ONNX ConvTranspose of f32 X [N, C, D1..Dk] and W [C, M/group, K1..Kk] with an optional B [M]: group, strides,
// dilations, pads, auto_pad, output_padding and output_shape as in ONNX. Each output sums its taps in double.
Result<PreparedOp> PrepareConvTransposeNd(const OpPrepareArgs& args);

// ConvTranspose's pads (begin per axis, then end per axis) as ONNX derives them: from output_shape when it is set
// (negative when output_shape exceeds the natural size: the extra positions hold only the bias, as in ONNX's
// reference), from auto_pad SAME_UPPER / SAME_LOWER (output = input * stride), else `pads` (zeros when empty).
Result<std::vector<int64_t>> ConvTransposePads(const std::string& auto_pad, std::span<const int64_t> pads,
                                               std::span<const int64_t> output_shape, std::span<const int64_t> in,
                                               std::span<const int64_t> kernel, std::span<const int64_t> strides,
                                               std::span<const int64_t> dilations,
                                               std::span<const int64_t> output_padding);

}  // namespace octet::float_ops
