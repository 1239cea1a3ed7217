// The qgemm specification: accumulator bounds, the accumulation loops and the output stages.
#include "ops/reference/qgemm_reference.h"

#include <algorithm>
#include <limits>

#include "core/status.h"
#include "ops/reference/quantize_reference.h"

namespace octet::reference {

namespace {
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

void CornerProducts(int32_t a_min, int32_t a_max, int32_t a_zp, int32_t w_min, int32_t w_max, int32_t w_zp,
                    int64_t* lo, int64_t* hi) {
  const int64_t da[2] = {int64_t{a_min} - a_zp, int64_t{a_max} - a_zp};
  const int64_t dw[2] = {int64_t{w_min} - w_zp, int64_t{w_max} - w_zp};
  *lo = std::numeric_limits<int64_t>::max();
  *hi = std::numeric_limits<int64_t>::min();
  for (int64_t x : da) {
    for (int64_t y : dw) {
      *lo = std::min(*lo, x * y);
      *hi = std::max(*hi, x * y);
    }
  }
}
}  // namespace

AccumulatorRange QGemmAccumulatorRange(int64_t k, int32_t a_min, int32_t a_max, int32_t a_zp, int32_t w_min,
                                       int32_t w_max, int32_t w_zp) {
  int64_t lo = 0, hi = 0;
  CornerProducts(a_min, a_max, a_zp, w_min, w_max, w_zp, &lo, &hi);
  return {k * lo, k * hi};  // |corner| < 2^33 and k < 2^30 in every caller: no int64 overflow
}

int64_t QGemmMaxK(int32_t a_min, int32_t a_max, int32_t a_zp, int32_t w_min, int32_t w_max, int32_t w_zp,
                  int64_t bias_min, int64_t bias_max) {
  if (bias_min < kInt32Min || bias_max > kInt32Max) return 0;
  int64_t lo = 0, hi = 0;
  CornerProducts(a_min, a_max, a_zp, w_min, w_max, w_zp, &lo, &hi);
  int64_t k_max = std::numeric_limits<int64_t>::max();
  if (hi > 0) k_max = std::min(k_max, (kInt32Max - bias_max) / hi);  // k * hi + bias_max <= INT32_MAX
  if (lo < 0) k_max = std::min(k_max, (bias_min - kInt32Min) / -lo);  // k * lo + bias_min >= INT32_MIN
  return k_max;
}

template <typename TA>
void QGemmAccumulate(size_t m, size_t n, size_t k, const TA* a, size_t a_stride, int32_t a_zp, const int8_t* w,
                     size_t w_stride, const int32_t* w_zero_points, int32_t* acc, size_t acc_stride) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (size_t kk = 0; kk < k; ++kk) {
        sum += (int64_t{a[i * a_stride + kk]} - a_zp) * (int64_t{w[j * w_stride + kk]} - w_zero_points[j]);
      }
      OCTET_CHECK(sum >= kInt32Min && sum <= kInt32Max);
      acc[i * acc_stride + j] = static_cast<int32_t>(sum);
    }
  }
}

template void QGemmAccumulate<uint8_t>(size_t, size_t, size_t, const uint8_t*, size_t, int32_t, const int8_t*,
                                       size_t, const int32_t*, int32_t*, size_t);
template void QGemmAccumulate<int8_t>(size_t, size_t, size_t, const int8_t*, size_t, int32_t, const int8_t*, size_t,
                                      const int32_t*, int32_t*, size_t);

const char* QGemmStageName(QGemmStage stage) {
  switch (stage) {
    case QGemmStage::kS32: return "s32";
    case QGemmStage::kFp32: return "fp32";
    case QGemmStage::kQ31: return "q31";
    case QGemmStage::kFbgemm: return "fbgemm";
    case QGemmStage::kF32: return "f32";
  }
  return "?";
}

namespace {
// acc + bias, which the operator's bound keeps inside int32.
int32_t AddBias(int32_t acc, const int32_t* bias, size_t j) {
  const int64_t v = int64_t{acc} + (bias != nullptr ? bias[j] : 0);
  OCTET_CHECK(v >= kInt32Min && v <= kInt32Max);
  return static_cast<int32_t>(v);
}

int32_t Requantize8(int32_t acc, size_t j, const QGemmStageParams& p) {
  switch (p.stage) {
    case QGemmStage::kFp32:
      return RequantizeFp32Value(AddBias(acc, p.bias_s32, j), p.multipliers[j], p.zero_point, p.lo, p.hi);
    case QGemmStage::kQ31:
      return RequantizeQ31Value(AddBias(acc, p.bias_s32, j), p.q31_multipliers[j], p.q31_shifts[j], p.zero_point,
                                p.lo, p.hi);
    case QGemmStage::kFbgemm:
      return RequantizeFbgemmValue(acc, p.bias_f32 != nullptr ? p.bias_f32[j] : 0.0f, p.multipliers[j],
                                   p.zero_point, p.lo, p.hi);
    default: OCTET_CHECK(!"not an 8-bit stage"); return 0;
  }
}
}  // namespace

void QGemmApplyStage(size_t m, size_t n, const int32_t* acc, size_t acc_stride, const QGemmStageParams& p, void* y,
                     size_t y_stride) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const int32_t a = acc[i * acc_stride + j];
      const size_t o = i * y_stride + j;
      switch (p.stage) {
        case QGemmStage::kS32: static_cast<int32_t*>(y)[o] = AddBias(a, p.bias_s32, j); break;
        case QGemmStage::kF32:
          static_cast<float*>(y)[o] =
              DequantizeAccumulatorValue(a, p.a_scale, p.w_scales[j], p.bias_f32 != nullptr ? p.bias_f32[j] : 0.0f);
          break;
        default:
          if (p.signed_output) {
            static_cast<int8_t*>(y)[o] = static_cast<int8_t>(Requantize8(a, j, p));
          } else {
            static_cast<uint8_t*>(y)[o] = static_cast<uint8_t>(Requantize8(a, j, p));
          }
          break;
      }
    }
  }
}

float QGemmFp32Multiplier(float a_scale, float w_scale, float y_scale) {
  const float product = a_scale * w_scale;
  const float inv = 1.0f / y_scale;
  return product * inv;
}

void QGemmQ31Multiplier(float a_scale, float w_scale, float y_scale, int32_t* multiplier, int32_t* shift) {
  QuantizeMultiplier(static_cast<double>(a_scale) * static_cast<double>(w_scale) / static_cast<double>(y_scale),
                     multiplier, shift);
}

void QGemmFbgemmParams(float a_scale, float w_scale, float y_scale, float bias, float* multiplier, float* bias_f32) {
  const float act_times_w_scale = a_scale * w_scale;
  *multiplier = act_times_w_scale / y_scale;
  *bias_f32 = bias / act_times_w_scale;
}

int32_t QuantizeBias(float bias, float a_scale, float w_scale) {
  const float scale = a_scale * w_scale;
  return QuantizeValue<int32_t>(bias, 1.0f / scale, 0, std::numeric_limits<int32_t>::min(),
                                std::numeric_limits<int32_t>::max());
}

}  // namespace octet::reference
