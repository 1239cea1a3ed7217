// The per-channel arrays an output stage (QGemmStageParams) points to, owned together: the kernel testers and the
// operator references fill them, each its own way, then take the params that point at them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops/reference/qgemm_reference.h"

namespace octet::testing {

struct StageArrays {
  explicit StageArrays(size_t n)
      : bias_s32(n, 0), multipliers(n, 1.0f), q31_m(n, 0), q31_s(n, 0), bias_f32(n, 0.0f), w_scales(n, 1.0f) {}

  std::vector<int32_t> bias_s32;   // accumulator units (s32, fp32 and q31 stages)
  std::vector<float> multipliers;  // fp32 and fbgemm stages
  std::vector<int32_t> q31_m;      // q31 stage: QuantizeMultiplier's significand
  std::vector<int32_t> q31_s;      // q31 stage: its shift
  std::vector<float> bias_f32;     // fbgemm (in accumulator units) and f32 stages
  std::vector<float> w_scales;     // f32 stage

  // Params of `stage` pointing at the arrays (valid while they live), with the f32 stage's activation scale; the
  // caller sets the output dtype, zero point and bounds.
  reference::QGemmStageParams Params(reference::QGemmStage stage, float a_scale) const {
    reference::QGemmStageParams p;
    p.stage = stage;
    p.bias_s32 = bias_s32.data();
    p.multipliers = multipliers.data();
    p.q31_multipliers = q31_m.data();
    p.q31_shifts = q31_s.data();
    p.bias_f32 = bias_f32.data();
    p.w_scales = w_scales.data();
    p.a_scale = a_scale;
    return p;
  }
};

}  // namespace octet::testing
