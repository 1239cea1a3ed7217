// The scalar specification of dynamic quantization (see dynamic_qgemm_reference.h).
#include "ops/reference/dynamic_qgemm_reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/reference/qgemm_reference.h"
#include "ops/reference/quantize_reference.h"

namespace octet::reference {

namespace {
// fp16's smallest normal: PyTorch keeps scales out of fp16's subnormal range (SMALL_SCALE_THRESHOLD).
constexpr float kSmallScaleThreshold = 6.1e-5f;
}  // namespace

ChosenQParams ChooseQuantizationParams(float min, float max, int32_t qmin, int32_t qmax, bool preserve_sparsity,
                                       bool force_scale_power_of_two, bool reduce_range) {
  if (reduce_range) {
    qmin = qmin / 2;
    qmax = qmax / 2;
  }
  if (min < 0 && max > 0 && preserve_sparsity) {
    const int32_t sym_qmin = -((qmax - qmin) / 2 + 1);
    const int32_t sym_qmax = (qmax - qmin) / 2;
    // float / int in float, then fabs and max in double, stored back to float: as PyTorch writes it.
    const double max_scale = std::max(std::fabs(static_cast<double>(min / static_cast<float>(sym_qmin))),
                                      std::fabs(static_cast<double>(max / static_cast<float>(sym_qmax))));
    min = static_cast<float>(max_scale * sym_qmin);
    max = static_cast<float>(max_scale * sym_qmax);
  }
  min = std::min(min, 0.0f);
  max = std::max(max, 0.0f);
  double scale = (static_cast<double>(max) - min) / (qmax - qmin);
  if (static_cast<float>(scale) == 0.0f || std::isinf(1.0f / static_cast<float>(scale))) scale = 0.1;
  if (force_scale_power_of_two) {
    if (scale < 1) {
      const int exponent = static_cast<int>(std::floor(std::log(1.0 / scale) / std::log(2)));
      scale = 1.0 / static_cast<double>(int64_t{1} << exponent);
    } else {
      scale = static_cast<double>(int64_t{1} << static_cast<int>(std::ceil(std::log(scale) / std::log(2))));
    }
  }
  if (scale < kSmallScaleThreshold) {
    const auto original = static_cast<float>(scale);
    scale = kSmallScaleThreshold;
    if (min == 0.0f) {
      max = kSmallScaleThreshold * static_cast<float>(qmax - qmin);
    } else if (max == 0.0f) {
      min = -kSmallScaleThreshold * static_cast<float>(qmax - qmin);
    } else {
      const float amplifier = kSmallScaleThreshold / original;
      min *= amplifier;
      max *= amplifier;
    }
  }
  const double zp_from_min = qmin - min / scale;
  const double zp_from_max = qmax - max / scale;
  const double zp_from_min_error = std::abs(qmin) - std::abs(min / scale);
  const double zp_from_max_error = std::abs(qmax) - std::abs(max / scale);
  double initial = zp_from_min_error < zp_from_max_error ? zp_from_min : zp_from_max;
  if (min < 0 && max > 0 && preserve_sparsity) initial = static_cast<double>(qmin + qmax) / 2;
  int32_t zero_point = 0;
  if (initial < qmin) {
    zero_point = qmin;
  } else if (initial > qmax) {
    zero_point = qmax;
  } else {
    zero_point = static_cast<int32_t>(std::nearbyint(initial));
  }
  return {scale, zero_point};
}

DynamicActivationQParams ChooseDynamicActivationQParams(size_t n, const float* x, bool reduce_range) {
  float lo = 0.0f, hi = 0.0f;
  if (n > 0) {
    lo = hi = x[0];
    for (size_t i = 1; i < n; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
  }
  const ChosenQParams q = ChooseQuantizationParams(lo, hi, 0, 255, false, false, reduce_range);
  DynamicActivationQParams p;
  p.scale = static_cast<float>(q.scale);
  p.zero_point = q.zero_point;
  p.quant_max = reduce_range ? 127 : 255;
  return p;
}

DynamicActivationQParams DynamicQGemm(size_t m, size_t n, size_t k, const float* x, size_t x_stride,
                                      const int8_t* w, size_t w_stride, const float* w_scales,
                                      const int32_t* w_zero_points, const float* bias, bool reduce_range, float* y,
                                      size_t y_stride) {
  std::vector<float> packed_x(m * k);
  for (size_t i = 0; i < m; ++i) std::copy(x + i * x_stride, x + i * x_stride + k, packed_x.data() + i * k);
  const DynamicActivationQParams q = ChooseDynamicActivationQParams(packed_x.size(), packed_x.data(), reduce_range);
  std::vector<uint8_t> a(m * k);
  const float inv_scale = 1.0f / q.scale;
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = QuantizeValue<uint8_t>(packed_x[i], inv_scale, q.zero_point, q.quant_min, q.quant_max);
  }
  std::vector<int32_t> acc(m * n);
  QGemmAccumulate<uint8_t>(m, n, k, a.data(), k, q.zero_point, w, w_stride, w_zero_points, acc.data(), n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      y[i * y_stride + j] = DequantizeAccumulatorValue(acc[i * n + j], q.scale, w_scales[j], bias ? bias[j] : 0.0f);
    }
  }
  return q;
}

}  // namespace octet::reference
