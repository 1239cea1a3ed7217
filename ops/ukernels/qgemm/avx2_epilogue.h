// The AVX2 output stages of the qgemm kernels, shared by qgemm__avx2.cc and qgemm__avxvnni.cc. Everything here has
// internal linkage, so each including file gets its own copy built with its own flags.
//
// Same arithmetic as avx512_epilogue.h, 8 columns per ymm: the raw dot products of A as the kernel fed it
// (a' = a + a_offset) plus col_offsets[j] - a_offset * col_sums[j] - w_zp[j] * row_sums[i] (mod 2^32), then
//   s32 / f32 as the reference; fp32 / fbgemm: vcvtdq2ps, (bias,) multiply, clamp in float to [lo - zp, hi - zp],
//   vcvtps2dq (nearest even), add zp, low byte of each lane; q31: MultiplyByQuantizedMultiplier from
//   fixedpoint/avx2.h, clamp, add zp.
// A column tail (< 8) goes through a small buffer, so nothing past column n of y is written.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ops/ukernels/fixedpoint/avx2.h"
#include "ops/ukernels/qgemm.h"

namespace octet {
namespace {
namespace avx2 {

// Stores the low byte of each int32 lane: `count` (1..8) bytes.
inline void StoreBytes(void* y, __m256i v, size_t count) {
  const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                                        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i b = _mm256_shuffle_epi8(v, pick);
  const uint64_t bytes = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm256_castsi256_si128(b))) |
                         uint64_t{static_cast<uint32_t>(_mm_cvtsi128_si32(_mm256_extracti128_si256(b, 1)))} << 32;
  std::memcpy(y, &bytes, count);
}

inline void Store32(void* y, __m256i v, size_t count) {
  if (count == 8) {
    _mm256_storeu_si256(static_cast<__m256i*>(y), v);
  } else {
    alignas(32) int32_t buffer[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(buffer), v);
    std::memcpy(y, buffer, count * 4);
  }
}

struct Columns {
  __m256i offset;
  __m256i w_zp;
  __m256 f0;
  __m256 f1;
  __m256i q_mult;
  Q31Shift q_shift;
};

template <QGemmStage kStage>
inline Columns LoadColumns(const QGemmUkernelParams& p, size_t j, int32_t a_offset) {
  Columns c;
  c.offset = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.col_offsets + j));
  if (a_offset != 0) {
    const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.col_sums + j));
    c.offset = _mm256_sub_epi32(c.offset, _mm256_mullo_epi32(sums, _mm256_set1_epi32(a_offset)));
  }
  c.w_zp = p.w_zero_points != nullptr ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.w_zero_points + j))
                                      : _mm256_setzero_si256();
  const QGemmStageParams& s = p.stage;
  if constexpr (kStage == QGemmStage::kFp32 || kStage == QGemmStage::kFbgemm) c.f0 = _mm256_loadu_ps(s.multipliers + j);
  if constexpr (kStage == QGemmStage::kF32) c.f0 = _mm256_loadu_ps(s.w_scales + j);
  if constexpr (kStage == QGemmStage::kFbgemm || kStage == QGemmStage::kF32) {
    c.f1 = s.bias_f32 != nullptr ? _mm256_loadu_ps(s.bias_f32 + j) : _mm256_setzero_ps();
  }
  if constexpr (kStage == QGemmStage::kQ31) {
    c.q_mult = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.q31_multipliers + j));
    c.q_shift = SplitShift(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.q31_shifts + j)));
  }
  return c;
}

// fp32 / fbgemm for columns [j0, j0 + 16) of every row, two rows at a time: the same float arithmetic as Epilogue's
// loop, then saturating packs instead of a shuffle and a store per 8 outputs (the epilogue took a fifth of
// MobileNetV2's time, whose 1x1 layers have small K). Exact because the values are already clamped to [lo, hi], which
// `unsigned_out` (lo >= 0, hi <= 255) or else lo >= -128, hi <= 127 puts inside the pack's range. No weight zero
// points.
template <QGemmStage kStage>
inline void EpilogueBytes16(const int32_t* tile, size_t tile_stride, size_t rows, int32_t a_offset,
                            const QGemmUkernelParams& p, size_t i0, size_t j0, uint8_t* y, size_t y_stride,
                            bool unsigned_out) {
  const QGemmStageParams& s = p.stage;
  const __m256i zp = _mm256_set1_epi32(s.zero_point);
  const __m256 lo_f = _mm256_set1_ps(static_cast<float>(s.lo - s.zero_point));
  const __m256 hi_f = _mm256_set1_ps(static_cast<float>(s.hi - s.zero_point));
  const Columns c0 = LoadColumns<kStage>(p, j0, a_offset);
  const Columns c1 = LoadColumns<kStage>(p, j0 + 8, a_offset);
  auto quantize = [&](const int32_t* row, const Columns& c) {
    __m256 x = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(row)), c.offset));
    if constexpr (kStage == QGemmStage::kFbgemm) x = _mm256_add_ps(x, c.f1);
    x = _mm256_min_ps(hi_f, _mm256_max_ps(lo_f, _mm256_mul_ps(x, c.f0)));
    return _mm256_add_epi32(_mm256_cvtps_epi32(x), zp);
  };
  // After the packs, dword k of lane 0 / 1 holds 4 bytes of: row a cols 0-3 / 4-7, row a cols 8-11 / 12-15, then
  // row b likewise; this order puts row a in the low half and row b in the high half.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (size_t r = 0; r < rows; r += 2) {
    const int32_t* ta = tile + r * tile_stride;
    const int32_t* tb = r + 1 < rows ? ta + tile_stride : ta;
    const __m256i a16 = _mm256_packs_epi32(quantize(ta, c0), quantize(ta + 8, c1));
    const __m256i b16 = _mm256_packs_epi32(quantize(tb, c0), quantize(tb + 8, c1));
    const __m256i bytes =
        _mm256_permutevar8x32_epi32(unsigned_out ? _mm256_packus_epi16(a16, b16) : _mm256_packs_epi16(a16, b16), order);
    uint8_t* ya = y + (i0 + r) * y_stride + j0;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(ya), _mm256_castsi256_si128(bytes));
    if (r + 1 < rows) _mm_storeu_si128(reinterpret_cast<__m128i*>(ya + y_stride), _mm256_extracti128_si256(bytes, 1));
  }
}

// The stage over an m x n tile of raw dot products (row stride tile_stride elements, 32-byte aligned rows).
template <QGemmStage kStage>
inline void Epilogue(const int32_t* tile, size_t tile_stride, size_t rows, size_t cols, int32_t a_offset,
                     const QGemmUkernelParams& p, size_t i0, size_t j0, void* y, size_t y_stride) {
  const QGemmStageParams& s = p.stage;
  const __m256i zp = _mm256_set1_epi32(s.zero_point);
  const __m256 lo_f = _mm256_set1_ps(static_cast<float>(s.lo - s.zero_point));
  const __m256 hi_f = _mm256_set1_ps(static_cast<float>(s.hi - s.zero_point));
  const __m256i lo_i = _mm256_set1_epi32(s.lo - s.zero_point);
  const __m256i hi_i = _mm256_set1_epi32(s.hi - s.zero_point);
  const __m256 a_scale = _mm256_set1_ps(s.a_scale);
  size_t first = 0;
  if constexpr (kStage == QGemmStage::kFp32 || kStage == QGemmStage::kFbgemm) {
    const bool unsigned_out = s.lo >= 0 && s.hi <= 255, signed_out = s.lo >= -128 && s.hi <= 127;
    if (p.w_zero_points == nullptr && (unsigned_out || signed_out)) {
      for (; first + 16 <= cols; first += 16) {
        EpilogueBytes16<kStage>(tile + first, tile_stride, rows, a_offset, p, i0, j0 + first, static_cast<uint8_t*>(y),
                                y_stride, unsigned_out);
      }
    }
  }
  for (size_t jv = first; jv < cols; jv += 8) {
    const size_t count = cols - jv < 8 ? cols - jv : 8;
    const size_t j = j0 + jv;
    const Columns c = LoadColumns<kStage>(p, j, a_offset);
    for (size_t r = 0; r < rows; ++r) {
      __m256i v =
          _mm256_add_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(tile + r * tile_stride + jv)), c.offset);
      if (p.w_zero_points != nullptr) {
        v = _mm256_sub_epi32(v, _mm256_mullo_epi32(c.w_zp, _mm256_set1_epi32(p.row_sums[i0 + r])));
      }
      const size_t o = (i0 + r) * y_stride + j;
      if constexpr (kStage == QGemmStage::kS32) {
        Store32(static_cast<int32_t*>(y) + o, v, count);
      } else if constexpr (kStage == QGemmStage::kF32) {
        const __m256 x = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v), a_scale), c.f0), c.f1);
        Store32(static_cast<float*>(y) + o, _mm256_castps_si256(x), count);
      } else if constexpr (kStage == QGemmStage::kQ31) {
        __m256i q = MultiplyByQuantizedMultiplier(v, c.q_mult, c.q_shift);
        q = _mm256_add_epi32(_mm256_min_epi32(hi_i, _mm256_max_epi32(lo_i, q)), zp);
        StoreBytes(static_cast<uint8_t*>(y) + o, q, count);
      } else {
        __m256 x = _mm256_cvtepi32_ps(v);
        if constexpr (kStage == QGemmStage::kFbgemm) x = _mm256_add_ps(x, c.f1);
        x = _mm256_min_ps(hi_f, _mm256_max_ps(lo_f, _mm256_mul_ps(x, c.f0)));
        StoreBytes(static_cast<uint8_t*>(y) + o, _mm256_add_epi32(_mm256_cvtps_epi32(x), zp), count);
      }
    }
  }
}

}  // namespace avx2
}  // namespace
}  // namespace octet
