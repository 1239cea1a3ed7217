// Conv backward (1-D and 2-D, groups, strides, dilations, asymmetric pads, auto_pad), through the sgemm family:
// per image and group, dW += dY col(X)^T and dcol = W^T dY scattered back into dX (col2im); dB sums dY.
#pragma once

#include "ops/float/grad/backward.h"

namespace octet::float_ops {

Status RegisterConvBackward(BackwardRegistry& registry);

}  // namespace octet::float_ops
