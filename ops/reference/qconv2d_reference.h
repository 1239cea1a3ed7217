// Scalar specification of the int8 2-D convolution (qconv2d, NHWC) and of its depthwise case (qdwconv): plain loops,
// exact int32 accumulation with zero points, the input zero point as the pad value. The output stages are qgemm's
// (reference::QGemmApplyStage, one output channel = one GEMM column). Every conv path and qdwconv kernel equals
// these loops bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace octet::reference {

// The geometry of one convolution. Layouts:
//   x: [n][h][w][c_in] activations (u8 or s8), one zero point x_zp.
//   w: [c_out][kh][kw][c_in / groups] s8 weights (OHWI), one zero point per output channel.
//   y: [n][out_h][out_w][c_out].
// Output channel o belongs to group g = o / (c_out / groups) and reads input channels [g * cg, (g + 1) * cg),
// cg = c_in / groups. Input row iy = oy * stride_h - pad_h + ky * dilation_h (likewise columns); a tap outside the
// image reads x_zp (PyTorch pads the quantized input with its zero point), so it adds exactly 0.
struct Conv2dGeometry {
  int64_t n = 1;
  int64_t h = 1;
  int64_t w = 1;
  int64_t c_in = 1;
  int64_t c_out = 1;
  int64_t kh = 1;
  int64_t kw = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_h = 0;
  int64_t pad_w = 0;
  int64_t dilation_h = 1;
  int64_t dilation_w = 1;
  int64_t groups = 1;

  // floor((h + 2 pad_h - dilation_h (kh - 1) - 1) / stride_h) + 1 (PyTorch's rule); <= 0 when the dilated kernel
  // does not fit the padded input (the operator rejects that).
  int64_t OutH() const { return OutSize(h, kh, stride_h, pad_h, dilation_h); }
  int64_t OutW() const { return OutSize(w, kw, stride_w, pad_w, dilation_w); }
  static int64_t OutSize(int64_t size, int64_t k, int64_t stride, int64_t pad, int64_t dilation) {
    const int64_t span = size + 2 * pad - dilation * (k - 1) - 1;
    return span < 0 ? 0 : span / stride + 1;
  }
};

// acc[n][oy][ox][o] = sum_{ky, kx, i < cg} (x'[n][iy][ix][g * cg + i] - x_zp) * (w[o][ky][kx][i] - w_zp[o]),
// x' = x inside the image and x_zp outside. Computed in int64 and checked to fit int32. TA is uint8_t or int8_t.
template <typename TA>
void QConv2dAccumulate(const Conv2dGeometry& g, const TA* x, int32_t x_zp, const int8_t* w,
                       const int32_t* w_zero_points, int32_t* acc);
// One accumulator acc[b][oy][ox][o] of the above (for spot checks of large problems).
template <typename TA>
int32_t QConv2dAccumulateOne(const Conv2dGeometry& g, const TA* x, int32_t x_zp, const int8_t* w,
                             const int32_t* w_zero_points, int64_t b, int64_t oy, int64_t ox, int64_t o);

}  // namespace octet::reference
