// Scalar specification of the int8 pools (QMaxPool, QAveragePool, QGlobalMaxPool, QGlobalAveragePool), NCHW with
// N * C planes; 1-D pools are the h = kh = 1 case.
//
// Max: y = the largest code among the window's taps inside the input (ONNX pads with -inf, so padding never wins).
//   y shares x's qparams, so no arithmetic is needed. A window with no tap inside the input (possible with
//   dilations) gives `empty`, the caller's quant_min (the float pool gives -inf, which quantizes to it).
// Average (QNNPACK's average pooling with PyTorch's divisor rule):
//   sum = Σ (x - x_zp) over the window's taps inside the input, in int32 (padding is real 0, i.e. contributes 0)
//   n   = with count_include_pad, the window clipped to the padded input [-pad_begin, size + pad_end) per axis
//         (which matters with ceil_mode); without it, the number of taps inside the input (>= 1)
//   y   = clamp(rne(f32(sum) * m(n)) + y_zp, lo, hi),  m(n) = f32(x_scale / f32(y_scale * f32(n)))
//   i.e. reference::RequantizeFp32Value(sum, m(n), y_zp, lo, hi) (ops/reference/requantize_reference.h).
//   A window with n = 0 (only padding, without count_include_pad) gives clamp(y_zp, lo, hi): real 0, as the float
//   pool's 0.
// Global average: the same with every element of the plane, n = H * W.
// Callers keep n <= 2^23 (so f32(n) is exact and |sum| < 2^31).
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>

#include "ops/reference/requantize_reference.h"

namespace octet::reference {

struct QPoolGeometry {
  int64_t planes = 1;  // N * C
  int64_t h = 1, w = 1, oh = 1, ow = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool count_include_pad = false;
};

struct QAveragePoolParams {
  float x_scale, y_scale;
  int32_t x_zp, y_zp, lo, hi;
};

inline float AveragePoolMultiplier(float x_scale, float y_scale, int64_t n) {
  const float divisor = y_scale * static_cast<float>(n);
  return x_scale / divisor;
}

// The requantized average of one window: sum of (x - x_zp) over n counted taps.
inline int32_t QAverageValue(int32_t sum, int64_t n, const QAveragePoolParams& q) {
  if (n == 0) return std::clamp(q.y_zp, q.lo, q.hi);
  return RequantizeFp32Value(sum, AveragePoolMultiplier(q.x_scale, q.y_scale, n), q.y_zp, q.lo, q.hi);
}

template <typename T>
void QMaxPool(const QPoolGeometry& g, const T* x, T* y, int32_t empty) {
  for (int64_t p = 0; p < g.planes; ++p) {
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int32_t m = INT32_MIN;
        for (int64_t i = 0; i < g.kh; ++i) {
          const int64_t iy = oy * g.sh - g.pad_top + i * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t ix = ox * g.sw - g.pad_left + j * g.dw;
            if (ix < 0 || ix >= g.w) continue;
            const int32_t v = x[(p * g.h + iy) * g.w + ix];
            if (v > m) m = v;
          }
        }
        y[(p * g.oh + oy) * g.ow + ox] = static_cast<T>(m == INT32_MIN ? empty : m);
      }
    }
  }
}

template <typename T>
void QAveragePool(const QPoolGeometry& g, const QAveragePoolParams& q, const T* x, T* y) {
  for (int64_t p = 0; p < g.planes; ++p) {
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t y0 = oy * g.sh - g.pad_top, x0 = ox * g.sw - g.pad_left;
        int32_t sum = 0;
        int64_t inside = 0;
        for (int64_t iy = y0; iy < y0 + g.kh; ++iy) {
          for (int64_t ix = x0; ix < x0 + g.kw; ++ix) {
            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
            sum += int32_t{x[(p * g.h + iy) * g.w + ix]} - q.x_zp;
            ++inside;
          }
        }
        int64_t n = inside;
        if (g.count_include_pad) {
          const int64_t rows = std::min(y0 + g.kh, g.h + g.pad_bottom) - y0;
          const int64_t cols = std::min(x0 + g.kw, g.w + g.pad_right) - x0;
          n = rows * cols;
        }
        y[(p * g.oh + oy) * g.ow + ox] = static_cast<T>(QAverageValue(sum, n, q));
      }
    }
  }
}

template <typename T>
void QGlobalMaxPool(int64_t planes, int64_t spatial, const T* x, T* y) {
  for (int64_t p = 0; p < planes; ++p) {
    int32_t m = INT32_MIN;
    for (int64_t i = 0; i < spatial; ++i) m = std::max<int32_t>(m, x[p * spatial + i]);
    y[p] = static_cast<T>(m);
  }
}

template <typename T>
void QGlobalAveragePool(int64_t planes, int64_t spatial, const QAveragePoolParams& q, const T* x, T* y) {
  for (int64_t p = 0; p < planes; ++p) {
    int32_t sum = 0;
    for (int64_t i = 0; i < spatial; ++i) sum += int32_t{x[p * spatial + i]} - q.x_zp;
    y[p] = static_cast<T>(QAverageValue(sum, spatial, q));
  }
}

}  // namespace octet::reference
