// The hyper-parameters of a 2-D convolution (kernel, stride, padding, dilation, groups) and their validation against
// an NHWC input and OHWI weights, shared by qconv2d and qdwconv.
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "core/status.h"
#include "ops/reference/qconv2d_reference.h"

namespace octet {

// PyTorch's Conv2d arguments; padding is symmetric (pad_h rows above and below, pad_w columns left and right).
struct Conv2dParams {
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_h = 0;
  int64_t pad_w = 0;
  int64_t dilation_h = 1;
  int64_t dilation_w = 1;
  int64_t groups = 1;

  std::string ToString() const;
};

// Checks the parameters alone and against OHWI weights of shape [c_out, kernel_h, kernel_w, c_in / groups]:
// kernel, stride and dilation >= 1, padding >= 0, groups >= 1 dividing c_out. `op` names the operator in messages.
Status ValidateConv2dWeights(const Conv2dParams& params, const Shape& weights, const char* op);

// The geometry of a call on an NHWC input: checks the input shape (rank 4, c_in = groups * the weights' per-group
// channels) and that the dilated kernel fits the padded input (output height and width >= 1).
Result<reference::Conv2dGeometry> Conv2dGeometryFor(const Conv2dParams& params, const Shape& weights,
                                                    const Shape& input, const char* op);

}  // namespace octet
