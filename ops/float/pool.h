// Pooling on f32, 1-D and 2-D: MaxPool (pads, strides, dilations, ceil_mode), AveragePool (count_include_pad both
// ways, ceil_mode), GlobalAveragePool and GlobalMaxPool. The window geometry (attributes, pads, output size and the
// in-range taps of each window) is shared with the int8 pools (ops/int8/qpool.cc).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/op_registry.h"

namespace octet::float_ops {

// The window geometry of a 1-D or 2-D pool over NC[H]W (1-D: h = oh = kh = 1).
struct PoolGeometry {
  int64_t n = 0, c = 0;
  int rank = 4;        // of X: 3 (1-D) or 4 (2-D)
  int64_t planes = 0;  // N * C
  int64_t h = 1, w = 0, oh = 1, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool count_include_pad = false;

  std::vector<int64_t> OutputDims() const;
};

// Reads and checks the ONNX MaxPool / AveragePool attributes of args.node (kernel_shape, strides, dilations, pads,
// auto_pad, ceil_mode, count_include_pad, storage_order) for input 0 (rank 3 or 4, any dtype) and the output size
// (checked against args.max_output_elements). MaxPool pads must be smaller than the kernel; AveragePool has no
// dilations.
Result<PoolGeometry> PreparePoolGeometry(const OpPrepareArgs& args, bool is_max);

// Per output position along one axis, the window taps [lo, hi) that fall inside the input.
struct WindowTaps {
  std::vector<std::pair<int64_t, int64_t>> rows, cols;
};
// For outputs o in [0, count): the window starts at o * stride - pad; tap t reads o * stride - pad + t * dilation.
std::vector<std::pair<int64_t, int64_t>> ComputeTaps(int64_t count, int64_t stride, int64_t pad, int64_t k,
                                                     int64_t dilation, int64_t n);
WindowTaps ComputeWindowTaps(const PoolGeometry& g);

// AveragePool divides as PyTorch's avg_pool2d does: with count_include_pad the window is clipped to the padded
// input (input plus pads, which matters with ceil_mode), without it to the input itself.
Status RegisterPoolOps(OpRegistry& registry);

}  // namespace octet::float_ops
