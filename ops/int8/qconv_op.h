// QConv of quantized graphs (domain "octet", ops/int8/int8_ops.h): ONNX Conv on int8 values.
//
//   QConv(x u8|s8 [N, C, H, W] or [N, C, W], w s8 [M, C / group, kh, kw] (or [M, C / group, kw]), [b]) -> y u8|s8
//   x and y per tensor; w a constant, per tensor or per channel on axis 0 (M scales), symmetric or affine; b a
//   constant [M] (see int8_ops::ReadLinearOutput: s32 in accumulator units, or f32). ONNX Conv attributes
//   kernel_shape, strides, pads (asymmetric allowed), dilations, group, auto_pad; plus requantization and activation.
//   y[n, m, oy, ox] = stage(sum (x - x_zp) * (w[m] - w_zp[m])) with taps outside the image reading x_zp: the spec is
//   reference::QConv2dAccumulate then reference::QGemmApplyStage, in NHWC / OHWI.
//
// Prepare converts the weight to OHWI and builds one QConv2dPlan (ops/qconv2d.h: depthwise, 1x1 or im2col, chosen
// by the plan; weights packed once). Run transposes x to NHWC in the scratch (asymmetric pads are written there
// explicitly, with the zero point; a strided 1x1 convolution without padding stages only the pixels it reads and
// runs as a 1x1 with stride 1), runs the plan into the scratch and transposes the result back to NCHW; both
// transposes (8x8 byte blocks in registers) are split over the context's threads in tiles of the shape alone, so
// results are bit-identical at any thread count. Where the NHWC layout pass (ops/int8/nhwc_layout.h) set
// nhwc_input / nhwc_output, x is read in place (or only staged for pads and subsampling) and y written in place;
// one channel (C = 1 in, M = 1 out) is the same bytes in both layouts and is never transposed.
#pragma once

#include "core/op_registry.h"
#include "core/status.h"

namespace octet::int8_ops {

Status RegisterQConvOps(OpRegistry& registry);

}  // namespace octet::int8_ops
