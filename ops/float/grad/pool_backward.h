// MaxPool, AveragePool (1-D and 2-D, strides, pads, ceil_mode, dilations for MaxPool, count_include_pad) and
// GlobalAveragePool backward. MaxPool routes each output's gradient to the first maximum of its window in row-major
// order (PyTorch's max_pool2d index), recomputed from X; AveragePool spreads it evenly over the window's taps with
// the forward's divisor (ops/float/pool.cc).
#pragma once

#include "ops/float/grad/backward.h"

namespace octet::float_ops {

Status RegisterPoolBackward(BackwardRegistry& registry);

}  // namespace octet::float_ops
