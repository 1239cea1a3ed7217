// Scalar specification of the int8 GEMM (qgemm): exact int32 accumulation with zero points, the K-overflow bound,
// and the output stages (DESIGN.md §4, numerics.md §2.12-2.13). Every qgemm kernel equals these loops bit for bit.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ops/reference/requantize_reference.h"

namespace octet::reference {

// Logical operands (whatever the packed layout of a kernel):
//   A: M x K row-major activations, u8 or s8, one zero point a_zp (a_stride elements between rows).
//   W: N x K row-major weights, s8 -- output channel j is row j, like a Linear layer's weight[out][in] -- with one
//      zero point per output channel, w_zp[j] (per-tensor weights repeat one value; symmetric weights have 0).
//   acc[i][j] = sum_{k} (a[i][k] - a_zp) * (w[j][k] - w_zp[j])           exact integer arithmetic
// The operator guarantees (QGemmAccumulatorRange below) that acc, and acc + bias where a stage adds an int32 bias,
// lie in int32; the reference checks it.

// The exact range of one accumulator over all possible operands: every product (a - a_zp)(w - w_zp) lies between
// the smallest and largest of the four corner products of [a_min - a_zp, a_max - a_zp] x [w_min - w_zp,
// w_max - w_zp], and all K terms can sit at the same corner, so [k * min_corner, k * max_corner] is attained.
struct AccumulatorRange {
  int64_t min;
  int64_t max;
};
AccumulatorRange QGemmAccumulatorRange(int64_t k, int32_t a_min, int32_t a_max, int32_t a_zp, int32_t w_min,
                                       int32_t w_max, int32_t w_zp);
// The largest K whose accumulator range (plus any int32 bias in [bias_min, bias_max]) fits int32; 0 if none
// (bias alone out of range), INT64_MAX when every product is 0. For u8 activations with zero point 0 (or 255)
// and s8 weights with zero point 0, bias 0: 65,793 (= floor((2^31 - 1) / (255 * 128)), the figure of DESIGN.md §4).
int64_t QGemmMaxK(int32_t a_min, int32_t a_max, int32_t a_zp, int32_t w_min, int32_t w_max, int32_t w_zp,
                  int64_t bias_min = 0, int64_t bias_max = 0);

// The accumulators, plain loops in int64 (checked to fit int32). TA is uint8_t or int8_t.
template <typename TA>
void QGemmAccumulate(size_t m, size_t n, size_t k, const TA* a, size_t a_stride, int32_t a_zp, const int8_t* w,
                     size_t w_stride, const int32_t* w_zero_points, int32_t* acc, size_t acc_stride);

// Output stages, applied to each accumulator acc = acc[i][j] of output channel j:
//   kS32:    y = acc + bias_s32[j]                                                       (int32; bias optional)
//   kFp32:   y = RequantizeFp32Value(acc + bias_s32[j], multipliers[j], zero_point, lo, hi)  (requantize_reference.h:
//            clamp(rne(f32(acc + bias) * m) + zp, lo, hi); PyTorch-qnnpack / XNNPACK / MLAS)
//   kQ31:    y = RequantizeQ31Value(acc + bias_s32[j], q31_multipliers[j], q31_shifts[j], zero_point, lo, hi) (TFLite)
//   kFbgemm: y = clamp(rne(f32(f32(acc) + bias_f32[j]) * multipliers[j]) + zero_point, lo, hi)  (float bias added in
//            float before the multiply; PyTorch's x86 backend, numerics.md §2.12)
//   kF32:    y = f32(f32(f32(acc) * a_scale) * w_scales[j]) + bias_f32[j]    (float out for dynamic quantization,
//            left to right as FBGEMM's ReQuantizeForFloat writes it; every operation rounded to float32, no FMA)
// rne = round half to even; f32(acc) rounds to nearest even. The 8-bit stages write u8 or s8 (lo <= hi inside the
// output dtype; a fused ReLU is lo = zero_point, ReLU6 also lowers hi). Missing bias arrays mean 0. Per-channel
// arrays have one entry per output channel (per-tensor values are repeated by the caller).
enum class QGemmStage : uint8_t { kS32, kFp32, kQ31, kFbgemm, kF32 };
const char* QGemmStageName(QGemmStage stage);  // "s32", "fp32", "q31", "fbgemm", "f32"

struct QGemmStageParams {
  QGemmStage stage = QGemmStage::kS32;
  const int32_t* bias_s32 = nullptr;         // kS32, kFp32, kQ31
  const float* multipliers = nullptr;        // kFp32, kFbgemm
  const int32_t* q31_multipliers = nullptr;  // kQ31 (QuantizeMultiplier's significand)
  const int32_t* q31_shifts = nullptr;       // kQ31
  const float* bias_f32 = nullptr;           // kFbgemm (already in accumulator units), kF32
  const float* w_scales = nullptr;           // kF32
  float a_scale = 1.0f;                      // kF32
  bool signed_output = false;                // 8-bit stages: s8 (true) or u8 output
  int32_t zero_point = 0;                    // 8-bit stages
  int32_t lo = 0;
  int32_t hi = 255;
};

// fbgemm: clamp(rne(f32(f32(acc) + bias) * multiplier) + zero_point, lo, hi).
inline int32_t RequantizeFbgemmValue(int32_t acc, float bias, float multiplier, int32_t zero_point, int32_t lo,
                                     int32_t hi) {
  const float sum = static_cast<float>(acc) + bias;
  const float v = sum * multiplier;
  double r = std::nearbyint(static_cast<double>(v)) + zero_point;  // exact in double; ±Inf saturate below
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return static_cast<int32_t>(r);
}

// f32 out: f32(f32(f32(acc) * a_scale) * w_scale) + bias.
inline float DequantizeAccumulatorValue(int32_t acc, float a_scale, float w_scale, float bias) {
  const float scaled = static_cast<float>(acc) * a_scale;
  const float product = scaled * w_scale;
  return product + bias;
}

// y[i * y_stride + j] = stage(acc[i * acc_stride + j]) for an m x n block of accumulators. y is int32_t* (kS32),
// float* (kF32), or uint8_t* / int8_t* (8-bit stages, by signed_output). Strides are in elements.
void QGemmApplyStage(size_t m, size_t n, const int32_t* acc, size_t acc_stride, const QGemmStageParams& params,
                     void* y, size_t y_stride);

// How the stage parameters derive from scales (what ops/qgemm.cc does per output channel):
//   fp32:   multiplier = f32(f32(a_scale * w_scale) * f32(1 / y_scale)); int32 bias = QuantizeBias(b, ...)
//   q31:    QuantizeMultiplier(double(a_scale) * double(w_scale) / double(y_scale)) (TFLite's per-channel form)
//   fbgemm: s = f32(a_scale * w_scale); multiplier = f32(s / y_scale); bias_f32 = f32(b / s)
float QGemmFp32Multiplier(float a_scale, float w_scale, float y_scale);
void QGemmQ31Multiplier(float a_scale, float w_scale, float y_scale, int32_t* multiplier, int32_t* shift);
void QGemmFbgemmParams(float a_scale, float w_scale, float y_scale, float bias, float* multiplier, float* bias_f32);
// A float bias in int32 accumulator units (PyTorch's qint32 quantize with scale f32(a_scale * w_scale) and zero
// point 0): rne(bias * f32(1 / f32(a_scale * w_scale))), saturated to int32 (NaN gives 0).
int32_t QuantizeBias(float bias, float a_scale, float w_scale);

}  // namespace octet::reference
