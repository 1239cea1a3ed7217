// The scalar specification of per-token dynamic quantization (see per_token_qgemm_reference.h).
#include "ops/reference/per_token_qgemm_reference.h"

#include "ops/reference/qgemm_reference.h"
#include "ops/reference/quantize_reference.h"

namespace octet::reference {

std::vector<DynamicActivationQParams> PerTokenDynamicQGemm(size_t m, size_t n, size_t k, const float* x,
                                                           size_t x_stride, const int8_t* w, size_t w_stride,
                                                           const float* w_scales, const int32_t* w_zero_points,
                                                           const float* bias, bool reduce_range, float* y,
                                                           size_t y_stride) {
  std::vector<DynamicActivationQParams> rows;
  rows.reserve(m);
  std::vector<uint8_t> a(k);
  std::vector<int32_t> acc(n);
  for (size_t i = 0; i < m; ++i) {
    const float* row = x + i * x_stride;
    const DynamicActivationQParams q = ChooseDynamicActivationQParams(k, row, reduce_range);
    const float inv_scale = 1.0f / q.scale;
    for (size_t p = 0; p < k; ++p) {
      a[p] = QuantizeValue<uint8_t>(row[p], inv_scale, q.zero_point, q.quant_min, q.quant_max);
    }
    QGemmAccumulate<uint8_t>(1, n, k, a.data(), k, q.zero_point, w, w_stride, w_zero_points, acc.data(), n);
    for (size_t j = 0; j < n; ++j) {
      y[i * y_stride + j] = DequantizeAccumulatorValue(acc[j], q.scale, w_scales[j], bias ? bias[j] : 0.0f);
    }
    rows.push_back(q);
  }
  return rows;
}

}  // namespace octet::reference
