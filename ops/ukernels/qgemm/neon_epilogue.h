// The NEON output stages of the qgemm kernels, shared by qgemm__neon.cc, qgemm__neondot.cc and qgemm__i8mm.cc.
// Everything here has internal linkage, so each including file gets its own copy built with its own flags.
//
// Same arithmetic as avx512_epilogue.h, 4 columns per q register: the raw dot products of A as the kernel fed it
// (a' = a + a_offset; u8 as s8 for smull / sdot is a_offset = -128) plus col_offsets[j] - a_offset * col_sums[j]
// - w_zp[j] * row_sums[i] (mod 2^32), then
//   s32 / f32 as the reference (scvtf rounds to nearest even; no fused multiply-add);
//   fp32 / fbgemm: scvtf, (bias,) multiply, clamp in float to [lo - zp, hi - zp], fcvtns (nearest even), add zp;
//   q31: MultiplyByQuantizedMultiplier from fixedpoint/neon.h (sqshl, sqrdmulh, fixup + srshl), clamp, add zp.
// A column tail (< 4) goes through a small buffer, so nothing past column n of y is written.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ops/ukernels/fixedpoint/neon.h"
#include "ops/ukernels/qgemm.h"

namespace octet {
namespace {
namespace neon {

inline void StoreBytes(void* y, int32x4_t v, size_t count) {
  const int16x4_t h = vmovn_s32(v);
  const int8x8_t b = vmovn_s16(vcombine_s16(h, h));
  uint32_t bytes = vget_lane_u32(vreinterpret_u32_s8(b), 0);
  std::memcpy(y, &bytes, count);
}

inline void Store32(void* y, int32x4_t v, size_t count) {
  if (count == 4) {
    vst1q_s32(static_cast<int32_t*>(y), v);
  } else {
    int32_t buffer[4];
    vst1q_s32(buffer, v);
    std::memcpy(y, buffer, count * 4);
  }
}

struct Columns {
  int32x4_t offset;
  int32x4_t w_zp;
  float32x4_t f0;
  float32x4_t f1;
  int32x4_t q_mult;
  Q31Shift q_shift;
};

template <QGemmStage kStage>
inline Columns LoadColumns(const QGemmUkernelParams& p, size_t j, int32_t a_offset) {
  Columns c{};
  c.offset = vld1q_s32(p.col_offsets + j);
  if (a_offset != 0) c.offset = vmlsq_s32(c.offset, vld1q_s32(p.col_sums + j), vdupq_n_s32(a_offset));
  c.w_zp = p.w_zero_points != nullptr ? vld1q_s32(p.w_zero_points + j) : vdupq_n_s32(0);
  const QGemmStageParams& s = p.stage;
  if constexpr (kStage == QGemmStage::kFp32 || kStage == QGemmStage::kFbgemm) c.f0 = vld1q_f32(s.multipliers + j);
  if constexpr (kStage == QGemmStage::kF32) c.f0 = vld1q_f32(s.w_scales + j);
  if constexpr (kStage == QGemmStage::kFbgemm || kStage == QGemmStage::kF32) {
    c.f1 = s.bias_f32 != nullptr ? vld1q_f32(s.bias_f32 + j) : vdupq_n_f32(0.0f);
  }
  if constexpr (kStage == QGemmStage::kQ31) {
    c.q_mult = vld1q_s32(s.q31_multipliers + j);
    c.q_shift = SplitShift(vld1q_s32(s.q31_shifts + j));
  }
  return c;
}

// The stage over an m x n tile of raw dot products (row stride tile_stride elements).
template <QGemmStage kStage>
inline void Epilogue(const int32_t* tile, size_t tile_stride, size_t rows, size_t cols, int32_t a_offset,
                     const QGemmUkernelParams& p, size_t i0, size_t j0, void* y, size_t y_stride) {
  const QGemmStageParams& s = p.stage;
  const int32x4_t zp = vdupq_n_s32(s.zero_point);
  const float32x4_t lo_f = vdupq_n_f32(static_cast<float>(s.lo - s.zero_point));
  const float32x4_t hi_f = vdupq_n_f32(static_cast<float>(s.hi - s.zero_point));
  const int32x4_t lo_i = vdupq_n_s32(s.lo - s.zero_point);
  const int32x4_t hi_i = vdupq_n_s32(s.hi - s.zero_point);
  const float32x4_t a_scale = vdupq_n_f32(s.a_scale);
  for (size_t jv = 0; jv < cols; jv += 4) {
    const size_t count = cols - jv < 4 ? cols - jv : 4;
    const size_t j = j0 + jv;
    const Columns c = LoadColumns<kStage>(p, j, a_offset);
    for (size_t r = 0; r < rows; ++r) {
      int32x4_t v = vaddq_s32(vld1q_s32(tile + r * tile_stride + jv), c.offset);
      if (p.w_zero_points != nullptr) v = vmlsq_s32(v, c.w_zp, vdupq_n_s32(p.row_sums[i0 + r]));
      const size_t o = (i0 + r) * y_stride + j;
      if constexpr (kStage == QGemmStage::kS32) {
        Store32(static_cast<int32_t*>(y) + o, v, count);
      } else if constexpr (kStage == QGemmStage::kF32) {
        const float32x4_t x = vaddq_f32(vmulq_f32(vmulq_f32(vcvtq_f32_s32(v), a_scale), c.f0), c.f1);
        Store32(static_cast<float*>(y) + o, vreinterpretq_s32_f32(x), count);
      } else if constexpr (kStage == QGemmStage::kQ31) {
        int32x4_t q = MultiplyByQuantizedMultiplier(v, c.q_mult, c.q_shift);
        q = vaddq_s32(vminq_s32(hi_i, vmaxq_s32(lo_i, q)), zp);
        StoreBytes(static_cast<uint8_t*>(y) + o, q, count);
      } else {
        float32x4_t x = vcvtq_f32_s32(v);
        if constexpr (kStage == QGemmStage::kFbgemm) x = vaddq_f32(x, c.f1);
        x = vminq_f32(hi_f, vmaxq_f32(lo_f, vmulq_f32(x, c.f0)));
        StoreBytes(static_cast<uint8_t*>(y) + o, vaddq_s32(vcvtnq_s32_f32(x), zp), count);
      }
    }
  }
}

}  // namespace neon
}  // namespace
}  // namespace octet
