// Pooling on f32, 1-D and 2-D: MaxPool (pads, strides, dilations, ceil_mode), AveragePool (count_include_pad both
// ways, ceil_mode), GlobalAveragePool and GlobalMaxPool.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// AveragePool divides as PyTorch's avg_pool2d does: with count_include_pad the window is clipped to the padded
// input (input plus pads, which matters with ceil_mode), without it to the input itself.
Status RegisterPoolOps(OpRegistry& registry);

}  // namespace octet::float_ops
