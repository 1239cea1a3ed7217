// QLayerNorm's integer arithmetic (the formulas are in the header).
#include "ops/reference/qlayernorm_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace octet::reference {

Result<QLayerNormParams> MakeQLayerNormParams(int64_t width, float x_scale, int32_t x_zp, float epsilon,
                                              const std::vector<float>& gamma, const std::vector<float>& beta,
                                              float y_scale, int32_t y_zp, int32_t y_quant_min, int32_t y_quant_max) {
  if (width <= 0 || width > kQLayerNormMaxWidth) {
    return InvalidArgument("the normalised axis has {} elements; the int8 LayerNorm takes 1 to {}", width,
                           kQLayerNormMaxWidth);
  }
  if (!(x_scale > 0.0f) || !(y_scale > 0.0f) || !std::isfinite(x_scale) || !std::isfinite(y_scale)) {
    return InvalidArgument("input and output scales must be positive and finite, got {} and {}", x_scale, y_scale);
  }
  if (!(epsilon >= 0.0f) || !std::isfinite(epsilon)) {
    return InvalidArgument("epsilon must be finite and >= 0, got {}", epsilon);
  }
  if (static_cast<int64_t>(gamma.size()) != width || (!beta.empty() && static_cast<int64_t>(beta.size()) != width)) {
    return InvalidArgument(
        "Scale and B must have {} elements (the normalised "
        "axis), got {} and {}",
        width, gamma.size(), beta.size());
  }
  QLayerNormParams p;
  p.width = width;
  p.x_zp = x_zp;
  const double d = static_cast<double>(width);
  const double eps_term = std::nearbyint(static_cast<double>(epsilon) * d * d * d /
                                         (static_cast<double>(x_scale) * static_cast<double>(x_scale)));
  p.eps_term = eps_term >= 0x1p61 ? (int64_t{1} << 61) : static_cast<int64_t>(eps_term);
  const double norm = std::sqrt(d) / static_cast<double>(y_scale) / static_cast<double>(1 << kQLayerNormFractionBits);
  for (int64_t c = 0; c < width; ++c) {
    const float g = gamma[static_cast<size_t>(c)];
    const float b = beta.empty() ? 0.0f : beta[static_cast<size_t>(c)];
    if (!std::isfinite(g) || !std::isfinite(b)) {
      return InvalidArgument("Scale and B must be finite; element {} is {} and {}", c, g, b);
    }
    p.multiplier.push_back(static_cast<float>(static_cast<double>(g) * norm));
    p.offset.push_back(b / y_scale);
    if (!std::isfinite(p.multiplier.back()) || !std::isfinite(p.offset.back())) {
      return InvalidArgument("Scale and B element {} ({} and {}) over the output scale {} overflow float", c, g, b,
                             y_scale);
    }
  }
  p.y_zp = y_zp;
  p.y_quant_min = y_quant_min;
  p.y_quant_max = y_quant_max;
  return p;
}

void FixedPointRsqrt(int64_t t, int64_t* r, int* k) {
  // Normalise t into [2^60, 2^62) by an even shift, so its square root has 30-31 significant bits.
  int shift = 0;
  uint64_t u = static_cast<uint64_t>(t);
  while (u < (uint64_t{1} << 60)) {
    u <<= 2;
    ++shift;
  }
  while (u >= (uint64_t{1} << 62)) {
    u >>= 2;
    --shift;
  }
  uint64_t s = static_cast<uint64_t>(std::sqrt(static_cast<double>(u)));  // a start; corrected to the exact floor
  while (s * s > u) --s;
  while ((s + 1) * (s + 1) <= u) ++s;
  *r = static_cast<int64_t>((uint64_t{1} << 61) / s);
  *k = shift;
}

namespace {

// v / 2^shift rounded half away from zero (shift >= 1).
int64_t RoundingShiftRight(int64_t v, int shift) {
  const int64_t half = int64_t{1} << (shift - 1);
  return v >= 0 ? (v + half) >> shift : -((-v + half) >> shift);
}

}  // namespace

template <typename X, typename Y>
void QLayerNormRow(const QLayerNormParams& p, const X* x, Y* y) {
  const int64_t n = p.width;
  int32_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += int32_t{x[i]} - p.x_zp;
  int64_t t = p.eps_term;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = n * (int64_t{x[i]} - p.x_zp) - sum;
    t += d * d;
  }
  int64_t r = 0;
  int k = 0;
  if (t > 0) FixedPointRsqrt(t, &r, &k);
  const int shift = 61 - k - kQLayerNormFractionBits;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = n * (int64_t{x[i]} - p.x_zp) - sum;
    const int64_t normalised = t > 0 ? RoundingShiftRight(d * r, shift) : 0;
    const float v = static_cast<float>(normalised) * p.multiplier[static_cast<size_t>(i)];
    const float w = v + p.offset[static_cast<size_t>(i)];
    // rne by lrintf (the default rounding mode); beyond 2^30 every value saturates anyway.
    const float bounded = std::min(std::max(w, -0x1p30f), 0x1p30f);
    const int32_t q = static_cast<int32_t>(std::lrintf(bounded)) + p.y_zp;
    y[i] = static_cast<Y>(std::min(std::max(q, p.y_quant_min), p.y_quant_max));
  }
}

template void QLayerNormRow<uint8_t, uint8_t>(const QLayerNormParams&, const uint8_t*, uint8_t*);
template void QLayerNormRow<uint8_t, int8_t>(const QLayerNormParams&, const uint8_t*, int8_t*);
template void QLayerNormRow<int8_t, uint8_t>(const QLayerNormParams&, const int8_t*, uint8_t*);
template void QLayerNormRow<int8_t, int8_t>(const QLayerNormParams&, const int8_t*, int8_t*);

}  // namespace octet::reference
