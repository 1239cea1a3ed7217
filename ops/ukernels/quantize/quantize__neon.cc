// NEON (aarch64 ASIMD) quantize kernels.
//
// 4 floats per vector. u8 / s8 take 16 elements per iteration: scale (FMUL, no FMA), clamp in float to
// [quant_min - zp, quant_max - zp] (integers, exact in float for 8-bit ranges, so clamping before rounding equals
// clamping after; ±Inf saturate here), FCVTNS (round to nearest even, independent of FPCR), add zp, then two rounds
// of UZP1 keep the low byte of each int32 lane (the values are already in [quant_min, quant_max]).
// s32 takes 8 per iteration: the clamp bounds are not exact in float, so the scaled value is widened to double
// (exact), clamped there to [quant_min - zp, quant_max - zp] (exact), rounded with FCVTNS to int64, its low 32 bits
// kept and zp added (the sum lies in [quant_min, quant_max], so wrapping arithmetic gives it exactly).
// NaN: FMAX/FMIN (and FCVTL) propagate it, and FCVTNS converts a NaN to 0 (the Arm ARM's FPToFixed returns 0 for
// a NaN operand when the Invalid Operation trap is disabled, as it is under Linux), so a NaN lane gives 0 + zp
// without an explicit mask. The NaN count is taken on the inputs x, as the reference counts them (x * inv_scale
// may also be NaN for 0 * Inf; such lanes give zp but are not counted). Tails go through a stack buffer: no
// over-read, no over-write.
#include <arm_neon.h>

#include <cstring>
#include <type_traits>

#include "ops/ukernels/quantize.h"

namespace octet {
namespace {

// Counts the NaN inputs: each block adds its per-lane "-1 per NaN" sums into a 64-bit accumulator.
class NanCounter {
 public:
  void Add(float32x4_t x0, float32x4_t x1, float32x4_t x2, float32x4_t x3) {
    const int32x4_t s = vaddq_s32(vaddq_s32(NanLanes(x0), NanLanes(x1)), vaddq_s32(NanLanes(x2), NanLanes(x3)));
    total_ = vpadalq_s32(total_, s);
  }
  void Add(float32x4_t x0, float32x4_t x1) { total_ = vpadalq_s32(total_, vaddq_s32(NanLanes(x0), NanLanes(x1))); }
  size_t Count() const { return static_cast<size_t>(-vaddvq_s64(total_)); }

 private:
  static int32x4_t NanLanes(float32x4_t x) { return vreinterpretq_s32_u32(vmvnq_u32(vceqq_f32(x, x))); }
  int64x2_t total_ = vdupq_n_s64(0);
};

inline int32x4_t ScaleClampRound(float32x4_t x, float32x4_t inv_scale, float32x4_t lo, float32x4_t hi,
                                 int32x4_t zp) {
  const float32x4_t v = vmulq_f32(x, inv_scale);
  const float32x4_t c = vminq_f32(vmaxq_f32(v, lo), hi);  // NaN stays NaN; FCVTNS makes it 0
  return vaddq_s32(vcvtnq_s32_f32(c), zp);
}

template <typename T>
size_t Quantize8(size_t n, const float* x, T* y, const QuantizeParams& p) {
  const float32x4_t inv_scale = vdupq_n_f32(p.inv_scale);
  const float32x4_t lo = vdupq_n_f32(static_cast<float>(int64_t{p.quant_min} - p.zero_point));
  const float32x4_t hi = vdupq_n_f32(static_cast<float>(int64_t{p.quant_max} - p.zero_point));
  const int32x4_t zp = vdupq_n_s32(p.zero_point);
  NanCounter nans;
  auto block16 = [&](const float* src, T* dst) {
    const float32x4_t x0 = vld1q_f32(src);
    const float32x4_t x1 = vld1q_f32(src + 4);
    const float32x4_t x2 = vld1q_f32(src + 8);
    const float32x4_t x3 = vld1q_f32(src + 12);
    nans.Add(x0, x1, x2, x3);
    const int32x4_t q0 = ScaleClampRound(x0, inv_scale, lo, hi, zp);
    const int32x4_t q1 = ScaleClampRound(x1, inv_scale, lo, hi, zp);
    const int32x4_t q2 = ScaleClampRound(x2, inv_scale, lo, hi, zp);
    const int32x4_t q3 = ScaleClampRound(x3, inv_scale, lo, hi, zp);
    const int16x8_t w01 = vuzp1q_s16(vreinterpretq_s16_s32(q0), vreinterpretq_s16_s32(q1));
    const int16x8_t w23 = vuzp1q_s16(vreinterpretq_s16_s32(q2), vreinterpretq_s16_s32(q3));
    const int8x16_t b = vuzp1q_s8(vreinterpretq_s8_s16(w01), vreinterpretq_s8_s16(w23));
    if constexpr (std::is_same_v<T, uint8_t>) {
      vst1q_u8(dst, vreinterpretq_u8_s8(b));
    } else {
      vst1q_s8(dst, b);
    }
  };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) block16(x + i, y + i);
  if (i < n) {
    float in[16] = {};  // the zero padding is never NaN, so the count stays exact
    T out[16];
    const size_t left = n - i;
    std::memcpy(in, x + i, left * sizeof(float));
    block16(in, out);
    std::memcpy(y + i, out, left * sizeof(T));
  }
  return nans.Count();
}

inline int32x4_t ScaleClampRoundWide(float32x4_t x, float32x4_t inv_scale, float64x2_t lo, float64x2_t hi,
                                     int32x4_t zp) {
  const float32x4_t v = vmulq_f32(x, inv_scale);
  const float64x2_t d0 = vminq_f64(vmaxq_f64(vcvt_f64_f32(vget_low_f32(v)), lo), hi);  // NaN stays NaN
  const float64x2_t d1 = vminq_f64(vmaxq_f64(vcvt_high_f64_f32(v), lo), hi);
  const int64x2_t r0 = vcvtnq_s64_f64(d0);  // NaN -> 0
  const int64x2_t r1 = vcvtnq_s64_f64(d1);
  return vaddq_s32(vuzp1q_s32(vreinterpretq_s32_s64(r0), vreinterpretq_s32_s64(r1)), zp);
}

}  // namespace

size_t quantize_f32_u8_ukernel__neon(size_t n, const float* x, uint8_t* y, const QuantizeParams& p) {
  return Quantize8(n, x, y, p);
}

size_t quantize_f32_s8_ukernel__neon(size_t n, const float* x, int8_t* y, const QuantizeParams& p) {
  return Quantize8(n, x, y, p);
}

size_t quantize_f32_s32_ukernel__neon(size_t n, const float* x, int32_t* y, const QuantizeParams& p) {
  const float32x4_t inv_scale = vdupq_n_f32(p.inv_scale);
  const float64x2_t lo = vdupq_n_f64(static_cast<double>(p.quant_min) - p.zero_point);
  const float64x2_t hi = vdupq_n_f64(static_cast<double>(p.quant_max) - p.zero_point);
  const int32x4_t zp = vdupq_n_s32(p.zero_point);
  NanCounter nans;
  auto block8 = [&](const float* src, int32_t* dst) {
    const float32x4_t x0 = vld1q_f32(src);
    const float32x4_t x1 = vld1q_f32(src + 4);
    nans.Add(x0, x1);
    vst1q_s32(dst, ScaleClampRoundWide(x0, inv_scale, lo, hi, zp));
    vst1q_s32(dst + 4, ScaleClampRoundWide(x1, inv_scale, lo, hi, zp));
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) block8(x + i, y + i);
  if (i < n) {
    float in[8] = {};
    int32_t out[8];
    const size_t left = n - i;
    std::memcpy(in, x + i, left * sizeof(float));
    block8(in, out);
    std::memcpy(y + i, out, left * sizeof(int32_t));
  }
  return nans.Count();
}

}  // namespace octet
