// Op-level specification of QConv (ops/int8/qconv_op.h): ONNX Conv on int8 NCHW tensors, written once on top of the
// NHWC kernel spec (qconv2d_reference.h). A 1-D convolution is the 2-D one of height 1 (kh = 1), OIHW weights are
// read as OHWI, and the pads (asymmetric allowed) are written into the input with its zero point, so a pad tap adds
// exactly 0. The test vectors' replay and the numeric suite's accumulator counters call it.
#pragma once

#include <cstdint>
#include <span>

#include "core/shape.h"
#include "ops/reference/qconv2d_reference.h"

namespace octet::reference {

// One QConv with its pads resolved (auto_pad applied):
//   x [n, c_in, h, w] (1-D: [n, c_in, w], h = 1), w [c_out, c_in / groups, kh, kw] (1-D: kh = 1),
//   acc [n, c_out, OutH(), OutW()] (1-D: [n, c_out, OutW()]).
struct QConvOpGeometry {
  int64_t n = 1, c_in = 1, h = 1, w = 1;
  int64_t c_out = 1, kh = 1, kw = 1;
  int64_t groups = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;

  // The NHWC kernel geometry over the explicitly padded input (its own pads 0).
  Conv2dGeometry Padded() const;
  int64_t OutH() const { return Padded().OutH(); }
  int64_t OutW() const { return Padded().OutW(); }
};

// From ONNX's forms: x and w shapes of rank 3 (1-D) or 4, strides and dilations with one value per spatial axis,
// pads [begin..., end...] (resolved), group. The caller checks the ranks and list lengths.
QConvOpGeometry MakeQConvOpGeometry(const Shape& x, const Shape& w, std::span<const int64_t> strides,
                                    std::span<const int64_t> dilations, std::span<const int64_t> pads, int64_t group);

// acc[b][o][oy][ox] (NCHW) = sum over the taps of (x' - x_zp) * (w[o] - w_zero_points[o]), x' the input padded with
// x_zp: reference::QConv2dAccumulate on the padded NHWC input and OHWI weights, transposed back. The caller checks
// that c_in == groups * w's dim 1, c_out % groups == 0 and that the output is not empty. TA is uint8_t or int8_t.
template <typename TA>
void QConvOpAccumulate(const QConvOpGeometry& g, const TA* x, int32_t x_zp, const int8_t* w,
                       const int32_t* w_zero_points, int32_t* acc);

}  // namespace octet::reference
