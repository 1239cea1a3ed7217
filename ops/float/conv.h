// Conv and ConvTranspose on f32, 1-D and 2-D (NCW / NCHW), with groups, strides, dilations, asymmetric pads and
// auto_pad. Conv runs one of three kernels chosen at Prepare: depthwise (direct loops, groups == channels),
// pointwise (1x1, stride 1, no padding: one GEMM per image) or im2col + GEMM. The GEMM is the sgemm family's kernel
// for the context (ops/float/sgemm.h); constant weights are packed once, at Prepare, in that kernel's panel layout,
// and im2col runs in chunks of output columns, each written straight into the kernel's packed-B layout and
// multiplied while it is in cache (chunks are split over threads; results do not depend on the thread count).
// ConvTranspose is GEMM + col2im. 3-D Conv and ConvTranspose take ops/float/conv_nd.h's direct loops.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterConvOps(OpRegistry& registry);

}  // namespace octet::float_ops
