// QConv's op-level reference: NCHW / OIHW / ONNX pads onto the NHWC kernel spec (see qconv_op_reference.h).
#include "ops/reference/qconv_op_reference.h"

#include <cstddef>
#include <vector>

namespace octet::reference {

Conv2dGeometry QConvOpGeometry::Padded() const {
  return Conv2dGeometry{.n = n,
                        .h = h + pad_top + pad_bottom,
                        .w = w + pad_left + pad_right,
                        .c_in = c_in,
                        .c_out = c_out,
                        .kh = kh,
                        .kw = kw,
                        .stride_h = stride_h,
                        .stride_w = stride_w,
                        .dilation_h = dilation_h,
                        .dilation_w = dilation_w,
                        .groups = groups};
}

QConvOpGeometry MakeQConvOpGeometry(const Shape& x, const Shape& w, std::span<const int64_t> strides,
                                    std::span<const int64_t> dilations, std::span<const int64_t> pads, int64_t group) {
  const bool one_d = x.rank() == 3;
  const size_t nd = one_d ? 1 : 2;
  QConvOpGeometry g;
  g.n = x.dim(0);
  g.c_in = x.dim(1);
  g.h = one_d ? 1 : x.dim(2);
  g.w = x.dim(x.rank() - 1);
  g.c_out = w.dim(0);
  g.kh = one_d ? 1 : w.dim(2);
  g.kw = w.dim(w.rank() - 1);
  g.groups = group;
  g.stride_h = one_d ? 1 : strides[0];
  g.stride_w = strides[nd - 1];
  g.dilation_h = one_d ? 1 : dilations[0];
  g.dilation_w = dilations[nd - 1];
  g.pad_top = one_d ? 0 : pads[0];
  g.pad_bottom = one_d ? 0 : pads[nd];
  g.pad_left = pads[nd - 1];
  g.pad_right = pads[2 * nd - 1];
  return g;
}

template <typename TA>
void QConvOpAccumulate(const QConvOpGeometry& q, const TA* x, int32_t x_zp, const int8_t* w,
                       const int32_t* w_zero_points, int32_t* acc) {
  const Conv2dGeometry g = q.Padded();
  const int64_t c = q.c_in, cg = q.c_in / q.groups, oh = g.OutH(), ow = g.OutW();
  // NCHW -> NHWC inside a border of x_zp.
  std::vector<TA> xp(static_cast<size_t>(g.n * g.h * g.w * c), static_cast<TA>(x_zp));
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t iy = 0; iy < q.h; ++iy)
        for (int64_t ix = 0; ix < q.w; ++ix)
          xp[static_cast<size_t>(((b * g.h + iy + q.pad_top) * g.w + ix + q.pad_left) * c + ch)] =
              x[((b * c + ch) * q.h + iy) * q.w + ix];
  // OIHW -> OHWI.
  std::vector<int8_t> ohwi(static_cast<size_t>(g.c_out * g.kh * g.kw * cg));
  for (int64_t o = 0; o < g.c_out; ++o)
    for (int64_t i = 0; i < cg; ++i)
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx)
          ohwi[static_cast<size_t>(((o * g.kh + ky) * g.kw + kx) * cg + i)] = w[((o * cg + i) * g.kh + ky) * g.kw + kx];
  std::vector<int32_t> nhwc(static_cast<size_t>(g.n * oh * ow * g.c_out));
  QConv2dAccumulate<TA>(g, xp.data(), x_zp, ohwi.data(), w_zero_points, nhwc.data());
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t o = 0; o < g.c_out; ++o)
      for (int64_t p = 0; p < oh * ow; ++p)
        acc[(b * g.c_out + o) * oh * ow + p] = nhwc[static_cast<size_t>((b * oh * ow + p) * g.c_out + o)];
}

template void QConvOpAccumulate<uint8_t>(const QConvOpGeometry&, const uint8_t*, int32_t, const int8_t*, const int32_t*,
                                         int32_t*);
template void QConvOpAccumulate<int8_t>(const QConvOpGeometry&, const int8_t*, int32_t, const int8_t*, const int32_t*,
                                        int32_t*);

}  // namespace octet::reference
