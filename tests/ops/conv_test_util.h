// Helpers for the convolution tests: random OHWI weights and NHWC activations with non-trivial qparams, random
// output stages, and the whole operator computed from the spec's functions only (reference::QConv2dAccumulate,
// QGemmApplyStage).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/qparams.h"
#include "core/tensor.h"
#include "ops/conv2d_params.h"
#include "ops/qgemm.h"
#include "ops/reference/qconv2d_reference.h"
#include "ops/reference/qgemm_reference.h"

namespace octet::testing {

inline QTensor MakeConvWeights(std::mt19937_64& rng, const Shape& shape, bool per_channel, bool affine) {
  Tensor w = Tensor::Create(DType::kS8, shape).value();
  for (auto& v : w.values<int8_t>()) v = static_cast<int8_t>(rng());
  const int64_t n = shape.dim(0);
  std::vector<float> scales;
  std::vector<int32_t> zps;
  for (int64_t j = 0; j < (per_channel ? n : 1); ++j) {
    scales.push_back(0.002f + 0.001f * static_cast<float>(rng() % 7));
    zps.push_back(affine ? static_cast<int32_t>(rng() % 41) - 20 : 0);
  }
  QParams qp = per_channel ? QParams::PerChannel(DType::kS8, scales, zps, 0, -128, 127).value()
                           : QParams::PerTensor(DType::kS8, scales[0], zps[0]).value();
  return QTensor::Create(std::move(w), std::move(qp)).value();
}

inline QTensor MakeConvInput(std::mt19937_64& rng, const Shape& shape, DType dtype, int32_t zp) {
  Tensor a = Tensor::Create(dtype, shape).value();
  auto* bytes = static_cast<uint8_t*>(a.raw_data());
  for (size_t i = 0; i < a.SizeBytes(); ++i) bytes[i] = static_cast<uint8_t>(rng());
  return QTensor::Create(std::move(a), QParams::PerTensor(dtype, 0.02f, zp).value()).value();
}

// Scales chosen so that requantized outputs spread over the range for accumulators of this many terms (not all
// saturated: the test would then prove little).
inline QGemmOutput RandomConvOutput(std::mt19937_64& rng, QGemmStage stage, int64_t c_out, int64_t k) {
  QGemmOutput out;
  out.stage = stage;
  const bool s8 = rng() & 1;
  out.output_dtype = s8 ? DType::kS8 : DType::kU8;
  out.output_zero_point = s8 ? -5 : 121;
  // acc ~ sqrt(k) * 128 * 74; a_scale * w_scale ~ 0.02 * 0.005 -> real ~ 1e-4 * acc.
  const float spread = 1e-4f * 128.0f * 74.0f * std::sqrt(static_cast<float>(std::max<int64_t>(k, 1)));
  out.output_scale = spread / 40.0f * (1.0f + 0.1f * static_cast<float>(rng() % 5));
  if (rng() % 3 == 0) out.lo = out.output_zero_point;  // fused ReLU
  const bool with_bias = rng() % 4 != 0;
  for (int64_t j = 0; with_bias && j < c_out; ++j) {
    if (stage == QGemmStage::kFbgemm || stage == QGemmStage::kF32) {
      out.bias_f32.push_back(static_cast<float>(static_cast<int64_t>(rng() % 2001) - 1000) * 0.001f);
    } else {
      out.bias_s32.push_back(static_cast<int32_t>(rng() % 20001) - 10000);
    }
  }
  return out;
}

// The reference result of the whole operator as bytes (u8/s8, int32 or float per the stage).
inline std::vector<uint8_t> ReferenceQConv2d(const QTensor& x, const QTensor& w, const Conv2dParams& params,
                                             const QGemmOutput& out) {
  const reference::Conv2dGeometry g = Conv2dGeometryFor(params, w.shape(), x.shape(), "test").value();
  const int64_t n = g.c_out, m = g.n * g.OutH() * g.OutW();
  const QParams& wq = w.qparams();
  std::vector<int32_t> w_zp(static_cast<size_t>(n));
  std::vector<float> w_scale(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    w_zp[static_cast<size_t>(j)] = wq.zero_points()[wq.per_channel() ? static_cast<size_t>(j) : 0];
    w_scale[static_cast<size_t>(j)] = wq.scales()[wq.per_channel() ? static_cast<size_t>(j) : 0];
  }
  std::vector<int32_t> acc(static_cast<size_t>(m * n));
  const int32_t x_zp = x.qparams().zero_point();
  if (x.values().dtype() == DType::kU8) {
    reference::QConv2dAccumulate(g, x.values().data<uint8_t>(), x_zp, w.values().data<int8_t>(), w_zp.data(),
                                 acc.data());
  } else {
    reference::QConv2dAccumulate(g, x.values().data<int8_t>(), x_zp, w.values().data<int8_t>(), w_zp.data(),
                                 acc.data());
  }
  reference::QGemmStageParams p;
  p.stage = out.stage;
  const float a_scale = x.qparams().scale();
  std::vector<float> mult(static_cast<size_t>(n)), bias_f(static_cast<size_t>(n));
  std::vector<int32_t> qm(static_cast<size_t>(n)), qs(static_cast<size_t>(n));
  for (size_t j = 0; j < static_cast<size_t>(n); ++j) {
    const float b = out.bias_f32.empty() ? 0.0f : out.bias_f32[j];
    mult[j] = reference::QGemmFp32Multiplier(a_scale, w_scale[j], out.output_scale);
    reference::QGemmQ31Multiplier(a_scale, w_scale[j], out.output_scale, &qm[j], &qs[j]);
    bias_f[j] = b;
    if (out.stage == QGemmStage::kFbgemm) {
      reference::QGemmFbgemmParams(a_scale, w_scale[j], out.output_scale, b, &mult[j], &bias_f[j]);
    }
  }
  p.bias_s32 = out.bias_s32.empty() ? nullptr : out.bias_s32.data();
  p.multipliers = mult.data();
  p.q31_multipliers = qm.data();
  p.q31_shifts = qs.data();
  p.bias_f32 = bias_f.data();
  p.w_scales = w_scale.data();
  p.a_scale = a_scale;
  p.signed_output = out.output_dtype == DType::kS8;
  p.zero_point = out.output_zero_point;
  p.lo = out.lo.value_or(static_cast<int32_t>(DTypeMin(out.output_dtype)));
  p.hi = out.hi.value_or(static_cast<int32_t>(DTypeMax(out.output_dtype)));
  const size_t size = out.stage == QGemmStage::kS32 || out.stage == QGemmStage::kF32 ? 4 : 1;
  std::vector<uint8_t> y(static_cast<size_t>(m * n) * size);
  reference::QGemmApplyStage(static_cast<size_t>(m), static_cast<size_t>(n), acc.data(), static_cast<size_t>(n), p,
                             y.data(), static_cast<size_t>(n));
  return y;
}

}  // namespace octet::testing
