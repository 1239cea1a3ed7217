// Indirection buffers and the indirect convolution's accumulators, in plain loops (see
// qconv2d_indirect_reference.h).
#include "ops/reference/qconv2d_indirect_reference.h"

#include <limits>

#include "core/status.h"

namespace octet::reference {

size_t ConvIndirectionSize(const Conv2dGeometry& g, size_t mr) {
  const size_t m = static_cast<size_t>(g.n * g.OutH() * g.OutW());
  const size_t tiles = (m + mr - 1) / mr;
  return tiles * static_cast<size_t>(g.kh * g.kw) * mr;
}

void BuildConvIndirection(const Conv2dGeometry& g, size_t mr, const void* x, const void* zero_row,
                          const void** indirection) {
  const int64_t oh = g.OutH(), ow = g.OutW(), taps = g.kh * g.kw;
  const int64_t m = g.n * oh * ow;
  const auto* bytes = static_cast<const uint8_t*>(x);
  const int64_t tiles = (m + static_cast<int64_t>(mr) - 1) / static_cast<int64_t>(mr);
  for (int64_t p = 0; p < tiles; ++p) {
    for (int64_t i = 0; i < static_cast<int64_t>(mr); ++i) {
      int64_t pixel = p * static_cast<int64_t>(mr) + i;
      if (pixel >= m) pixel = m - 1;  // a partial last tile repeats its last pixel
      const int64_t b = pixel / (oh * ow), oy = (pixel / ow) % oh, ox = pixel % ow;
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t ix = ox * g.stride_w - g.pad_w + kx * g.dilation_w;
          const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
          const int64_t t = ky * g.kw + kx;
          indirection[(p * taps + t) * static_cast<int64_t>(mr) + i] =
              inside ? static_cast<const void*>(bytes + ((b * g.h + iy) * g.w + ix) * g.c_in) : zero_row;
        }
      }
    }
  }
}

template <typename TA>
void QConv2dIndirectAccumulate(const Conv2dGeometry& g, size_t mr, const void* const* indirection, int32_t x_zp,
                               const int8_t* w, const int32_t* w_zero_points, int32_t* acc) {
  const int64_t m = g.n * g.OutH() * g.OutW(), taps = g.kh * g.kw;
  const int64_t cg = g.c_in / g.groups, og = g.c_out / g.groups;
  for (int64_t pixel = 0; pixel < m; ++pixel) {
    const int64_t p = pixel / static_cast<int64_t>(mr), i = pixel % static_cast<int64_t>(mr);
    for (int64_t o = 0; o < g.c_out; ++o) {
      const int64_t group = o / og;
      int64_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        const auto* a = static_cast<const TA*>(indirection[(p * taps + t) * static_cast<int64_t>(mr) + i]) + group * cg;
        const int8_t* wt = w + (o * taps + t) * cg;
        for (int64_t c = 0; c < cg; ++c) sum += (int64_t{a[c]} - x_zp) * (int64_t{wt[c]} - w_zero_points[o]);
      }
      OCTET_CHECK(sum >= std::numeric_limits<int32_t>::min() && sum <= std::numeric_limits<int32_t>::max());
      acc[pixel * g.c_out + o] = static_cast<int32_t>(sum);
    }
  }
}

template void QConv2dIndirectAccumulate<uint8_t>(const Conv2dGeometry&, size_t, const void* const*, int32_t,
                                                 const int8_t*, const int32_t*, int32_t*);
template void QConv2dIndirectAccumulate<int8_t>(const Conv2dGeometry&, size_t, const void* const*, int32_t,
                                                const int8_t*, const int32_t*, int32_t*);

}  // namespace octet::reference
