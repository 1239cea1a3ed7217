// QSoftmax's table and integer arithmetic (the formulas are in the header).
#include "ops/reference/qsoftmax_reference.h"

#include <cmath>

namespace octet::reference {

Result<QSoftmaxParams> MakeQSoftmaxParams(float x_scale, float y_scale, int32_t y_zp, int32_t y_quant_min,
                                          int32_t y_quant_max) {
  if (!(x_scale > 0.0f) || !std::isfinite(x_scale) || !std::isfinite(y_scale) || !(y_scale >= 0x1p-16f)) {
    return InvalidArgument(
        "the int8 Softmax needs a positive finite input "
        "scale and an output scale >= 2^-16, "
        "got {} and {}",
        x_scale, y_scale);
  }
  QSoftmaxParams p;
  for (int j = 0; j < 256; ++j) {
    const double e = std::exp(-static_cast<double>(x_scale) * j) * static_cast<double>(1 << kQSoftmaxExpBits);
    p.exp_table[static_cast<size_t>(j)] = static_cast<uint32_t>(std::nearbyint(e));
  }
  p.multiplier = static_cast<uint64_t>(std::nearbyint(65536.0 / static_cast<double>(y_scale)));
  p.y_zp = y_zp;
  p.y_quant_min = y_quant_min;
  p.y_quant_max = y_quant_max;
  return p;
}

template <typename X, typename Y>
void QSoftmaxRow(const QSoftmaxParams& p, int64_t n, const X* x, Y* y) {
  X max = x[0];
  for (int64_t i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  uint64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += p.exp_table[static_cast<size_t>(int32_t{max} - int32_t{x[i]})];
  const uint64_t den = sum << 16;  // sum >= 2^23 (the maximum's entry)
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t e = p.exp_table[static_cast<size_t>(int32_t{max} - int32_t{x[i]})];
    int64_t q = static_cast<int64_t>((e * p.multiplier + (den >> 1)) / den) + p.y_zp;
    if (q < p.y_quant_min) q = p.y_quant_min;
    if (q > p.y_quant_max) q = p.y_quant_max;
    y[i] = static_cast<Y>(q);
  }
}

template void QSoftmaxRow<uint8_t, uint8_t>(const QSoftmaxParams&, int64_t, const uint8_t*, uint8_t*);
template void QSoftmaxRow<uint8_t, int8_t>(const QSoftmaxParams&, int64_t, const uint8_t*, int8_t*);
template void QSoftmaxRow<int8_t, uint8_t>(const QSoftmaxParams&, int64_t, const int8_t*, uint8_t*);
template void QSoftmaxRow<int8_t, int8_t>(const QSoftmaxParams&, int64_t, const int8_t*, int8_t*);

}  // namespace octet::reference
