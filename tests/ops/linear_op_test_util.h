// Helpers shared by the tests of the QGemm-shaped operators (qgemm, qconv2d): random s8 weights and u8/s8 activations
// with non-trivial qparams, a random output stage (dtype, zero point, fused ReLU, bias), and the spec's output stage
// applied to reference accumulators (reference::QGemmApplyStage with the multipliers of qgemm_reference.h).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/qparams.h"
#include "core/tensor.h"
#include "ops/qgemm.h"
#include "ops/reference/qgemm_reference.h"
#include "tests/ops/stage_arrays.h"

namespace octet::testing {

// Random s8 weights of `shape` (output channels first): per-tensor or per-channel along axis 0, symmetric or affine.
inline QTensor MakeLinearWeights(std::mt19937_64& rng, const Shape& shape, bool per_channel, bool affine) {
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

// Random activations of `dtype` (u8 or s8), scale 0.02, zero point `zp`.
inline QTensor MakeLinearInput(std::mt19937_64& rng, const Shape& shape, DType dtype, int32_t zp) {
  Tensor a = Tensor::Create(dtype, shape).value();
  auto* bytes = static_cast<uint8_t*>(a.raw_data());
  for (size_t i = 0; i < a.SizeBytes(); ++i) bytes[i] = static_cast<uint8_t>(rng());
  return QTensor::Create(std::move(a), QParams::PerTensor(dtype, 0.02f, zp).value()).value();
}

// A random output for `stage` and `n` output channels: u8 or s8, output scale `scale` plus 0 to 4 `step`s, a fused
// ReLU one time in three, and (three times in four) a bias of the stage's kind: f32 for fbgemm and f32, else s32.
inline QGemmOutput RandomLinearOutput(std::mt19937_64& rng, QGemmStage stage, int64_t n, float scale, float step) {
  QGemmOutput out;
  out.stage = stage;
  const bool s8 = rng() & 1;
  out.output_dtype = s8 ? DType::kS8 : DType::kU8;
  out.output_zero_point = s8 ? -5 : 121;
  out.output_scale = scale + step * static_cast<float>(rng() % 5);
  if (rng() % 3 == 0) out.lo = out.output_zero_point;  // fused ReLU
  const bool with_bias = rng() % 4 != 0;
  for (int64_t j = 0; with_bias && j < n; ++j) {
    if (stage == QGemmStage::kFbgemm || stage == QGemmStage::kF32) {
      out.bias_f32.push_back(static_cast<float>(static_cast<int64_t>(rng() % 2001) - 1000) * 0.001f);
    } else {
      out.bias_s32.push_back(static_cast<int32_t>(rng() % 20001) - 10000);
    }
  }
  return out;
}

// The zero point of each of the `n` output channels of `w` (one repeated for per-tensor weights).
inline std::vector<int32_t> LinearWeightZeroPoints(const QTensor& w, int64_t n) {
  const QParams& wq = w.qparams();
  std::vector<int32_t> w_zp(static_cast<size_t>(n));
  for (size_t j = 0; j < w_zp.size(); ++j) w_zp[j] = wq.zero_points()[wq.per_channel() ? j : 0];
  return w_zp;
}

// The spec's output stage on accumulators acc [m][n] of activations with scale `a_scale` and weights `w`: bytes
// (u8/s8, int32 or float per the stage of `out`).
inline std::vector<uint8_t> ReferenceLinearStage(const std::vector<int32_t>& acc, int64_t m, int64_t n, float a_scale,
                                                 const QTensor& w, const QGemmOutput& out) {
  const QParams& wq = w.qparams();
  const size_t nn = static_cast<size_t>(n);
  StageArrays st(nn);
  for (size_t j = 0; j < nn; ++j) {
    st.w_scales[j] = wq.scales()[wq.per_channel() ? j : 0];
    st.bias_f32[j] = out.bias_f32.empty() ? 0.0f : out.bias_f32[j];
    st.multipliers[j] = reference::QGemmFp32Multiplier(a_scale, st.w_scales[j], out.output_scale);
    reference::QGemmQ31Multiplier(a_scale, st.w_scales[j], out.output_scale, &st.q31_m[j], &st.q31_s[j]);
    if (out.stage == QGemmStage::kFbgemm) {
      reference::QGemmFbgemmParams(a_scale, st.w_scales[j], out.output_scale, st.bias_f32[j], &st.multipliers[j],
                                   &st.bias_f32[j]);
    }
  }
  reference::QGemmStageParams p = st.Params(out.stage, a_scale);
  p.bias_s32 = out.bias_s32.empty() ? nullptr : out.bias_s32.data();
  p.signed_output = out.output_dtype == DType::kS8;
  p.zero_point = out.output_zero_point;
  p.lo = out.lo.value_or(static_cast<int32_t>(DTypeMin(out.output_dtype)));
  p.hi = out.hi.value_or(static_cast<int32_t>(DTypeMax(out.output_dtype)));
  const size_t size = out.stage == QGemmStage::kS32 || out.stage == QGemmStage::kF32 ? 4 : 1;
  std::vector<uint8_t> y(static_cast<size_t>(m) * nn * size);
  reference::QGemmApplyStage(static_cast<size_t>(m), nn, acc.data(), nn, p, y.data(), nn);
  return y;
}

}  // namespace octet::testing
