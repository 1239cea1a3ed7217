// The scalar depthwise kernel: per output row, the bias, then every tap's row added in (i, j) order over the output
// columns whose input column is inside the plane. The reference path, and the kernel where no SIMD one is enabled.
#include <algorithm>

#include "ops/float/ukernels/dwconv.h"

namespace octet::float_ops {

void dwconv_f32_ukernel__scalar(const DwconvPlaneArgs& g) {
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    float* yr = g.y + oh * g.ow;
    for (int64_t ow = 0; ow < g.ow; ++ow) yr[ow] = g.bias;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t ih = oh * g.sh - g.pad_top + i * g.dh;
      if (ih < 0 || ih >= g.h) continue;
      const float* xr = g.x + ih * g.w;
      for (int64_t j = 0; j < g.kw; ++j) {
        const float wv = g.weights[i * g.kw + j];
        const int64_t iw0 = j * g.dw - g.pad_left;
        const int64_t ow_lo = iw0 >= 0 ? 0 : std::min(g.ow, (-iw0 + g.sw - 1) / g.sw);
        const int64_t ow_hi = std::max(ow_lo, std::min(g.ow, (g.w - iw0 + g.sw - 1) / g.sw));
        for (int64_t ow = ow_lo; ow < ow_hi; ++ow) yr[ow] += wv * xr[ow * g.sw + iw0];
      }
    }
    g.activation.Apply(yr, g.ow);
  }
}

}  // namespace octet::float_ops
