// Softmax and LogSoftmax (opset 13: along one axis, default -1) on f32, max-subtracted for stability:
// softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x); log_softmax = x_i - max x - log(sum_j exp(x_j - max x)).
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

Status RegisterSoftmaxOps(OpRegistry& registry);

}  // namespace octet::float_ops
