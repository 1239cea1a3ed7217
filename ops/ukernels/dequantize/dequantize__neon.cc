// NEON (aarch64 ASIMD) dequantize kernels.
//
// y = float(q - zp) * scale: the difference exact, converted with one round to nearest even, one FMUL.
// u8 / s8 take 16 elements per iteration, widened to int32 with SXTL/UXTL. When no q - zp of the input type can
// leave int32 (every zero point of a valid 8-bit QParams), the difference is an int32 SUB and SCVTF converts it
// with one rounding (round to nearest even, the default FPCR mode, as the reference's int64 -> float). Otherwise
// (and for s32 inputs with zp != 0) the difference is taken in int64 (SSUBL), converted to double exactly
// (|q - zp| < 2^33 < 2^53) and narrowed with FCVTN, which is again one rounding of the exact value.
// s32 takes 8 per iteration. Tails go through a stack buffer: no over-read, no over-write.
#include <arm_neon.h>

#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/ukernels/dequantize.h"

namespace octet {
namespace {

// float(q - zp) * scale for 4 lanes; kWide when q - zp may overflow int32.
template <bool kWide>
inline float32x4_t Dequantize4(int32x4_t q, int32x4_t zp, float32x4_t scale) {
  if constexpr (!kWide) {
    return vmulq_f32(vcvtq_f32_s32(vsubq_s32(q, zp)), scale);
  } else {
    const int64x2_t d0 = vsubl_s32(vget_low_s32(q), vget_low_s32(zp));
    const int64x2_t d1 = vsubl_high_s32(q, zp);
    const float32x4_t f = vcvt_high_f32_f64(vcvt_f32_f64(vcvtq_f64_s64(d0)), vcvtq_f64_s64(d1));
    return vmulq_f32(f, scale);
  }
}

template <typename T, bool kWide>
void Dequantize8Impl(size_t n, const T* q, float* y, const DequantizeParams& p) {
  const int32x4_t zp = vdupq_n_s32(p.zero_point);
  const float32x4_t scale = vdupq_n_f32(p.scale);
  auto block16 = [&](const T* src, float* dst) {
    int16x8_t w0;
    int16x8_t w1;
    if constexpr (std::is_same_v<T, uint8_t>) {
      const uint8x16_t b = vld1q_u8(src);
      w0 = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(b)));
      w1 = vreinterpretq_s16_u16(vmovl_high_u8(b));
    } else {
      const int8x16_t b = vld1q_s8(src);
      w0 = vmovl_s8(vget_low_s8(b));
      w1 = vmovl_high_s8(b);
    }
    vst1q_f32(dst, Dequantize4<kWide>(vmovl_s16(vget_low_s16(w0)), zp, scale));
    vst1q_f32(dst + 4, Dequantize4<kWide>(vmovl_high_s16(w0), zp, scale));
    vst1q_f32(dst + 8, Dequantize4<kWide>(vmovl_s16(vget_low_s16(w1)), zp, scale));
    vst1q_f32(dst + 12, Dequantize4<kWide>(vmovl_high_s16(w1), zp, scale));
  };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) block16(q + i, y + i);
  if (i < n) {
    T in[16] = {};
    float out[16];
    const size_t left = n - i;
    std::memcpy(in, q + i, left * sizeof(T));
    block16(in, out);
    std::memcpy(y + i, out, left * sizeof(float));
  }
}

template <typename T>
void Dequantize8(size_t n, const T* q, float* y, const DequantizeParams& p) {
  constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  const int64_t lo = int64_t{std::numeric_limits<T>::min()} - p.zero_point;
  const int64_t hi = int64_t{std::numeric_limits<T>::max()} - p.zero_point;
  if (lo >= kInt32Min && hi <= kInt32Max) {
    Dequantize8Impl<T, false>(n, q, y, p);
  } else {
    Dequantize8Impl<T, true>(n, q, y, p);
  }
}

template <bool kWide>
void Dequantize32(size_t n, const int32_t* q, float* y, const DequantizeParams& p) {
  const int32x4_t zp = vdupq_n_s32(p.zero_point);
  const float32x4_t scale = vdupq_n_f32(p.scale);
  auto block8 = [&](const int32_t* src, float* dst) {
    vst1q_f32(dst, Dequantize4<kWide>(vld1q_s32(src), zp, scale));
    vst1q_f32(dst + 4, Dequantize4<kWide>(vld1q_s32(src + 4), zp, scale));
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) block8(q + i, y + i);
  if (i < n) {
    int32_t in[8] = {};
    float out[8];
    const size_t left = n - i;
    std::memcpy(in, q + i, left * sizeof(int32_t));
    block8(in, out);
    std::memcpy(y + i, out, left * sizeof(float));
  }
}

}  // namespace

void dequantize_u8_f32_ukernel__neon(size_t n, const uint8_t* q, float* y, const DequantizeParams& p) {
  Dequantize8(n, q, y, p);
}

void dequantize_s8_f32_ukernel__neon(size_t n, const int8_t* q, float* y, const DequantizeParams& p) {
  Dequantize8(n, q, y, p);
}

void dequantize_s32_f32_ukernel__neon(size_t n, const int32_t* q, float* y, const DequantizeParams& p) {
  if (p.zero_point == 0) {
    Dequantize32<false>(n, q, y, p);  // q - 0 cannot overflow
  } else {
    Dequantize32<true>(n, q, y, p);
  }
}

}  // namespace octet
