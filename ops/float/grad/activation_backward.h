// Backward of the element-wise activations (Relu, Clip, HardSwish, Sigmoid, Tanh) and of Softmax, with PyTorch's
// conventions at the kinks (threshold_backward, hardtanh_backward, hardswish_backward).
#pragma once

#include "ops/float/grad/backward.h"

namespace octet::float_ops {

Status RegisterActivationBackward(BackwardRegistry& registry);

}  // namespace octet::float_ops
