// The AVX-512 output stages of the qgemm kernels, shared by qgemm__avx512vnni.cc and qgemm__amx.cc (both built with
// AVX-512 F/BW/DQ/VL). Everything here has internal linkage, so each including file gets its own copy built with
// its own flags (no ODR clash between ISA object libraries).
//
// Input: an m x n tile of raw dot products sum_k a'[i][k] * w[j][k] in int32, where a' = a + a_offset is A as the
// kernel fed it (s8 + 128 for vpdpbusd). The epilogue adds col_offsets[j] - a_offset * col_sums[j] and, for affine
// weights, - w_zp[j] * row_sums[i] (all mod 2^32), then applies the stage 16 columns at a time (masked tails):
//   s32:    store.
//   f32:    vcvtdq2ps, multiply by a_scale, multiply by w_scale[j], add bias (three roundings, as the reference).
//   fp32:   vcvtdq2ps, multiply, clamp in float to [lo - zp, hi - zp] (clamping before rounding to an integer bound
//           equals clamping after), vcvtps2dq (nearest even), add zp, vpmovdb.
//   fbgemm: as fp32 with the float bias added before the multiply.
//   q31:    MultiplyByQuantizedMultiplier from fixedpoint/avx512.h, clamp in int32, add zp.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "ops/ukernels/fixedpoint/avx512.h"
#include "ops/ukernels/qgemm.h"

namespace octet {
namespace {
namespace avx512 {

inline __mmask16 TailMask(size_t left) { return static_cast<__mmask16>(left >= 16 ? 0xFFFFu : (1u << left) - 1u); }

// The per-column vectors of one group of 16 columns, loaded once per tile and reused by its rows.
struct Columns {
  __m512i offset;  // col_offsets - a_offset * col_sums
  __m512i w_zp;
  __m512 f0;       // fp32/fbgemm: multiplier; f32: w_scale
  __m512 f1;       // fbgemm/f32: bias
  __m512i q_mult;  // q31
  Q31Shift q_shift;
};

template <QGemmStage kStage>
inline Columns LoadColumns(const QGemmUkernelParams& p, size_t j, int32_t a_offset) {
  Columns c;
  c.offset = _mm512_loadu_si512(p.col_offsets + j);
  if (a_offset != 0) {
    c.offset = _mm512_sub_epi32(c.offset,
                                _mm512_mullo_epi32(_mm512_loadu_si512(p.col_sums + j), _mm512_set1_epi32(a_offset)));
  }
  c.w_zp = p.w_zero_points != nullptr ? _mm512_loadu_si512(p.w_zero_points + j) : _mm512_setzero_si512();
  const QGemmStageParams& s = p.stage;
  if constexpr (kStage == QGemmStage::kFp32 || kStage == QGemmStage::kFbgemm) c.f0 = _mm512_loadu_ps(s.multipliers + j);
  if constexpr (kStage == QGemmStage::kF32) c.f0 = _mm512_loadu_ps(s.w_scales + j);
  if constexpr (kStage == QGemmStage::kFbgemm || kStage == QGemmStage::kF32) {
    c.f1 = s.bias_f32 != nullptr ? _mm512_loadu_ps(s.bias_f32 + j) : _mm512_setzero_ps();
  }
  if constexpr (kStage == QGemmStage::kQ31) {
    c.q_mult = _mm512_loadu_si512(s.q31_multipliers + j);
    c.q_shift = SplitShift(_mm512_loadu_si512(s.q31_shifts + j));
  }
  return c;
}

// Rounds a float vector already clamped to [lo - zp, hi - zp], adds zp and stores the low bytes (u8 or s8 alike).
inline void StoreQuantized(void* y, __mmask16 m, __m512 clamped, __m512i zp) {
  _mm512_mask_cvtepi32_storeu_epi8(y, m, _mm512_add_epi32(_mm512_cvtps_epi32(clamped), zp));
}

template <QGemmStage kStage>
inline void Epilogue(const int32_t* tile, size_t tile_stride, size_t rows, size_t cols, int32_t a_offset,
                     const QGemmUkernelParams& p, size_t i0, size_t j0, void* y, size_t y_stride) {
  const QGemmStageParams& s = p.stage;
  const __m512i zp = _mm512_set1_epi32(s.zero_point);
  const __m512 lo_f = _mm512_set1_ps(static_cast<float>(s.lo - s.zero_point));
  const __m512 hi_f = _mm512_set1_ps(static_cast<float>(s.hi - s.zero_point));
  const __m512i lo_i = _mm512_set1_epi32(s.lo - s.zero_point);
  const __m512i hi_i = _mm512_set1_epi32(s.hi - s.zero_point);
  const __m512 a_scale = _mm512_set1_ps(s.a_scale);
  for (size_t jv = 0; jv < cols; jv += 16) {
    const __mmask16 m = TailMask(cols - jv);
    const size_t j = j0 + jv;
    const Columns c = LoadColumns<kStage>(p, j, a_offset);
    for (size_t r = 0; r < rows; ++r) {
      __m512i v = _mm512_add_epi32(_mm512_load_si512(tile + r * tile_stride + jv), c.offset);
      if (p.w_zero_points != nullptr) {
        v = _mm512_sub_epi32(v, _mm512_mullo_epi32(c.w_zp, _mm512_set1_epi32(p.row_sums[i0 + r])));
      }
      const size_t o = (i0 + r) * y_stride + j;
      if constexpr (kStage == QGemmStage::kS32) {
        _mm512_mask_storeu_epi32(static_cast<int32_t*>(y) + o, m, v);
      } else if constexpr (kStage == QGemmStage::kF32) {
        const __m512 x = _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v), a_scale), c.f0), c.f1);
        _mm512_mask_storeu_ps(static_cast<float*>(y) + o, m, x);
      } else if constexpr (kStage == QGemmStage::kQ31) {
        __m512i q = MultiplyByQuantizedMultiplier(v, c.q_mult, c.q_shift);
        q = _mm512_add_epi32(_mm512_min_epi32(hi_i, _mm512_max_epi32(lo_i, q)), zp);
        _mm512_mask_cvtepi32_storeu_epi8(static_cast<uint8_t*>(y) + o, m, q);
      } else {
        __m512 x = _mm512_cvtepi32_ps(v);
        if constexpr (kStage == QGemmStage::kFbgemm) x = _mm512_add_ps(x, c.f1);
        x = _mm512_mul_ps(x, c.f0);
        StoreQuantized(static_cast<uint8_t*>(y) + o, m, _mm512_min_ps(hi_f, _mm512_max_ps(lo_f, x)), zp);
      }
    }
  }
}

}  // namespace avx512
}  // namespace
}  // namespace octet
