// The qconv2d specification: the convolution sum over taps and group channels, pad taps reading the zero point.
#include "ops/reference/qconv2d_reference.h"

#include <limits>

#include "core/status.h"

namespace octet::reference {

template <typename TA>
int32_t QConv2dAccumulateOne(const Conv2dGeometry& g, const TA* x, int32_t x_zp, const int8_t* w,
                             const int32_t* w_zero_points, int64_t b, int64_t oy, int64_t ox, int64_t o) {
  const int64_t cg = g.c_in / g.groups, og = g.c_out / g.groups;
  const int64_t group = o / og;
  int64_t sum = 0;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const int64_t iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const int64_t ix = ox * g.stride_w - g.pad_w + kx * g.dilation_w;
      const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
      for (int64_t i = 0; i < cg; ++i) {
        const int64_t xv = inside ? int64_t{x[((b * g.h + iy) * g.w + ix) * g.c_in + group * cg + i]} : int64_t{x_zp};
        const int64_t wv = w[((o * g.kh + ky) * g.kw + kx) * cg + i];
        sum += (xv - x_zp) * (wv - w_zero_points[o]);
      }
    }
  }
  OCTET_CHECK(sum >= std::numeric_limits<int32_t>::min() && sum <= std::numeric_limits<int32_t>::max());
  return static_cast<int32_t>(sum);
}

template <typename TA>
void QConv2dAccumulate(const Conv2dGeometry& g, const TA* x, int32_t x_zp, const int8_t* w,
                       const int32_t* w_zero_points, int32_t* acc) {
  const int64_t oh = g.OutH(), ow = g.OutW();
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        for (int64_t o = 0; o < g.c_out; ++o) {
          acc[((b * oh + oy) * ow + ox) * g.c_out + o] =
              QConv2dAccumulateOne(g, x, x_zp, w, w_zero_points, b, oy, ox, o);
        }
      }
    }
  }
}

template int32_t QConv2dAccumulateOne<uint8_t>(const Conv2dGeometry&, const uint8_t*, int32_t, const int8_t*,
                                               const int32_t*, int64_t, int64_t, int64_t, int64_t);
template int32_t QConv2dAccumulateOne<int8_t>(const Conv2dGeometry&, const int8_t*, int32_t, const int8_t*,
                                              const int32_t*, int64_t, int64_t, int64_t, int64_t);
template void QConv2dAccumulate<uint8_t>(const Conv2dGeometry&, const uint8_t*, int32_t, const int8_t*,
                                         const int32_t*, int32_t*);
template void QConv2dAccumulate<int8_t>(const Conv2dGeometry&, const int8_t*, int32_t, const int8_t*,
                                        const int32_t*, int32_t*);

}  // namespace octet::reference
