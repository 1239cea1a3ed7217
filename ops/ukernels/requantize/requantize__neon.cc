// NEON (aarch64 ASIMD) requantize kernels: int32 [rows x channels] -> u8 / s8, fp32 and q31 schemes.
//
// Each row is processed 16 channels at a time (four int32x4 vectors -> one 16-byte store); per-channel parameters
// are loaded for the same 16 channels, per-tensor ones are broadcast once. A per-tensor block whose rows are
// contiguous in both acc and y is processed as one long row. The last partial block of a row (and its per-channel
// parameters) goes through a stack buffer: no over-read of acc or of the parameter arrays, no over-write of y.
// Results are in [lo, hi], inside the output type, so two rounds of UZP1 keep the low byte of each lane.
//
// fp32: SCVTF (round to nearest even, the default FPCR mode, as static_cast<float>) then one FMUL. The clamp
// [lo - zp, hi - zp] holds integers, so clamping before rounding equals clamping after; ±Inf products saturate
// there. When both bounds are exact in float (|lo - zp|, |hi - zp| <= 2^24: every zero point of a valid 8-bit
// QParams) the clamp is FMAX/FMIN in float, FCVTNS rounds to nearest even and zp is added in int32. Otherwise the
// product is widened to double (exact), clamped to the exact double bounds, rounded with FCVTNS to int64 and its
// low 32 bits plus zp taken (the sum lies in [lo, hi], so wrapping arithmetic gives it exactly).
//
// q31: MultiplyByQuantizedMultiplier from fixedpoint/neon.h (SQSHL, SQRDMULH, fixup + SRSHL; the proof that it
//   equals the reference is there). The zero point is added with SQADD and the sum clamped to [lo, hi]: saturation
//   to int32 cannot change a value that is then clamped into [lo, hi], so this equals the reference's int64 sum
//   and clamp.
#include <arm_neon.h>

#include <cstring>
#include <type_traits>

#include "ops/ukernels/fixedpoint/neon.h"
#include "ops/ukernels/requantize.h"

namespace octet {
namespace {

template <typename T>
inline void StoreNarrow(T* dst, int32x4_t q0, int32x4_t q1, int32x4_t q2, int32x4_t q3) {
  const int16x8_t w01 = vuzp1q_s16(vreinterpretq_s16_s32(q0), vreinterpretq_s16_s32(q1));
  const int16x8_t w23 = vuzp1q_s16(vreinterpretq_s16_s32(q2), vreinterpretq_s16_s32(q3));
  const int8x16_t b = vuzp1q_s8(vreinterpretq_s8_s16(w01), vreinterpretq_s8_s16(w23));
  if constexpr (std::is_same_v<T, uint8_t>) {
    vst1q_u8(dst, vreinterpretq_u8_s8(b));
  } else {
    vst1q_s8(dst, b);
  }
}

// The row loop shared by both schemes. `block(a, c, dst)` requantizes 16 channels starting at channel c of the
// row at `a` into dst; `tail_block(a, dst)` does the same for the staged last channels (full .. channels), whose
// parameters the caller has staged once. A per-tensor block with contiguous rows is one long row.
template <typename T, typename Block, typename TailBlock>
void ForEachBlock(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y, size_t y_stride,
                  bool per_channel, const Block& block, const TailBlock& tail_block) {
  if (!per_channel && acc_stride == channels && y_stride == channels) {
    channels *= rows;
    rows = 1;
  }
  const size_t full = channels - channels % 16;
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * acc_stride;
    T* out = y + r * y_stride;
    for (size_t c = 0; c < full; c += 16) block(a + c, c, out + c);
    if (full < channels) {
      const size_t left = channels - full;
      int32_t in[16] = {};
      T staged_out[16];
      std::memcpy(in, a + full, left * sizeof(int32_t));
      tail_block(in, staged_out);
      std::memcpy(out + full, staged_out, left * sizeof(T));
    }
  }
}

// Channels [full, channels) of a per-channel parameter array, zero padded to 16.
template <typename P>
void StageTailParams(P (&staged)[16], const P* params, size_t channels, bool per_channel) {
  const size_t full = channels - channels % 16;
  if (per_channel && full < channels) std::memcpy(staged, params + full, (channels - full) * sizeof(P));
}

template <bool kWide>
struct Fp32Consts;

template <>
struct Fp32Consts<false> {
  explicit Fp32Consts(const RequantizeFp32Params& p)
      : lo(vdupq_n_f32(static_cast<float>(int64_t{p.lo} - p.zero_point))),
        hi(vdupq_n_f32(static_cast<float>(int64_t{p.hi} - p.zero_point))),
        zp(vdupq_n_s32(p.zero_point)) {}
  int32x4_t Apply(int32x4_t acc, float32x4_t m) const {
    const float32x4_t v = vmulq_f32(vcvtq_f32_s32(acc), m);
    return vaddq_s32(vcvtnq_s32_f32(vminq_f32(vmaxq_f32(v, lo), hi)), zp);
  }
  float32x4_t lo;
  float32x4_t hi;
  int32x4_t zp;
};

template <>
struct Fp32Consts<true> {
  explicit Fp32Consts(const RequantizeFp32Params& p)
      : lo(vdupq_n_f64(static_cast<double>(p.lo) - p.zero_point)),
        hi(vdupq_n_f64(static_cast<double>(p.hi) - p.zero_point)),
        zp(vdupq_n_s32(p.zero_point)) {}
  int32x4_t Apply(int32x4_t acc, float32x4_t m) const {
    const float32x4_t v = vmulq_f32(vcvtq_f32_s32(acc), m);
    const float64x2_t d0 = vminq_f64(vmaxq_f64(vcvt_f64_f32(vget_low_f32(v)), lo), hi);
    const float64x2_t d1 = vminq_f64(vmaxq_f64(vcvt_high_f64_f32(v), lo), hi);
    const int64x2_t r0 = vcvtnq_s64_f64(d0);
    const int64x2_t r1 = vcvtnq_s64_f64(d1);
    return vaddq_s32(vuzp1q_s32(vreinterpretq_s32_s64(r0), vreinterpretq_s32_s64(r1)), zp);
  }
  float64x2_t lo;
  float64x2_t hi;
  int32x4_t zp;
};

// 16 channels; m points at their 16 multipliers when kPerChannel, else m_tensor holds the one multiplier.
template <bool kPerChannel, typename T, typename K>
[[gnu::always_inline]] inline void Fp32Block(const int32_t* a, const float* m, float32x4_t m_tensor, const K& k,
                                             T* dst) {
  float32x4_t m0 = m_tensor;
  float32x4_t m1 = m_tensor;
  float32x4_t m2 = m_tensor;
  float32x4_t m3 = m_tensor;
  if constexpr (kPerChannel) {
    m0 = vld1q_f32(m);
    m1 = vld1q_f32(m + 4);
    m2 = vld1q_f32(m + 8);
    m3 = vld1q_f32(m + 12);
  }
  StoreNarrow(dst, k.Apply(vld1q_s32(a), m0), k.Apply(vld1q_s32(a + 4), m1), k.Apply(vld1q_s32(a + 8), m2),
              k.Apply(vld1q_s32(a + 12), m3));
}

template <typename T, bool kWide, bool kPerChannel>
void RequantizeFp32Impl(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y,
                        size_t y_stride, const RequantizeFp32Params& p) {
  const Fp32Consts<kWide> k(p);
  const float32x4_t m_tensor = vdupq_n_f32(p.multipliers[0]);
  float m_tail[16] = {};
  StageTailParams(m_tail, p.multipliers, channels, kPerChannel);
  ForEachBlock(
      rows, channels, acc, acc_stride, y, y_stride, kPerChannel,
      [&](const int32_t* a, size_t c, T* dst) { Fp32Block<kPerChannel>(a, p.multipliers + c, m_tensor, k, dst); },
      [&](const int32_t* a, T* dst) { Fp32Block<kPerChannel>(a, m_tail, m_tensor, k, dst); });
}

template <typename T, bool kWide>
void RequantizeFp32Impl(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y,
                        size_t y_stride, const RequantizeFp32Params& p) {
  if (p.per_channel) {
    RequantizeFp32Impl<T, kWide, true>(rows, channels, acc, acc_stride, y, y_stride, p);
  } else {
    RequantizeFp32Impl<T, kWide, false>(rows, channels, acc, acc_stride, y, y_stride, p);
  }
}

template <typename T>
void RequantizeFp32Neon(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y,
                        size_t y_stride, const RequantizeFp32Params& p) {
  if (rows == 0 || channels == 0) return;  // multipliers[0] may not exist
  constexpr int64_t kExact = int64_t{1} << 24;  // every integer of magnitude <= 2^24 is a float
  const int64_t lo = int64_t{p.lo} - p.zero_point;
  const int64_t hi = int64_t{p.hi} - p.zero_point;
  if (lo >= -kExact && hi <= kExact) {
    RequantizeFp32Impl<T, false>(rows, channels, acc, acc_stride, y, y_stride, p);
  } else {
    RequantizeFp32Impl<T, true>(rows, channels, acc, acc_stride, y, y_stride, p);
  }
}

struct Q31Channel {
  int32x4_t multiplier;
  neon::Q31Shift shift;
};

inline Q31Channel MakeQ31Channel(int32x4_t multiplier, int32x4_t shift) {
  return {multiplier, neon::SplitShift(shift)};
}

struct Q31Consts {
  int32x4_t zp;
  int32x4_t lo;
  int32x4_t hi;
};

inline int32x4_t RequantizeQ31x4(int32x4_t acc, const Q31Channel& ch, const Q31Consts& k) {
  const int32x4_t scaled = neon::MultiplyByQuantizedMultiplier(acc, ch.multiplier, ch.shift);
  return vminq_s32(vmaxq_s32(vqaddq_s32(scaled, k.zp), k.lo), k.hi);
}

// 16 channels; m and s point at their 16 multipliers and shifts when kPerChannel, else `tensor` holds the one.
template <bool kPerChannel, typename T>
[[gnu::always_inline]] inline void Q31Block(const int32_t* a, const int32_t* m, const int32_t* s,
                                            const Q31Channel& tensor, const Q31Consts& k, T* dst) {
  if constexpr (kPerChannel) {
    StoreNarrow(dst, RequantizeQ31x4(vld1q_s32(a), MakeQ31Channel(vld1q_s32(m), vld1q_s32(s)), k),
                RequantizeQ31x4(vld1q_s32(a + 4), MakeQ31Channel(vld1q_s32(m + 4), vld1q_s32(s + 4)), k),
                RequantizeQ31x4(vld1q_s32(a + 8), MakeQ31Channel(vld1q_s32(m + 8), vld1q_s32(s + 8)), k),
                RequantizeQ31x4(vld1q_s32(a + 12), MakeQ31Channel(vld1q_s32(m + 12), vld1q_s32(s + 12)), k));
  } else {
    StoreNarrow(dst, RequantizeQ31x4(vld1q_s32(a), tensor, k), RequantizeQ31x4(vld1q_s32(a + 4), tensor, k),
                RequantizeQ31x4(vld1q_s32(a + 8), tensor, k), RequantizeQ31x4(vld1q_s32(a + 12), tensor, k));
  }
}

template <typename T, bool kPerChannel>
void RequantizeQ31Impl(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y, size_t y_stride,
                       const RequantizeQ31Params& p) {
  const Q31Consts k{vdupq_n_s32(p.zero_point), vdupq_n_s32(p.lo), vdupq_n_s32(p.hi)};
  const Q31Channel tensor = MakeQ31Channel(vdupq_n_s32(p.multipliers[0]), vdupq_n_s32(p.shifts[0]));
  int32_t m_tail[16] = {};
  int32_t s_tail[16] = {};
  StageTailParams(m_tail, p.multipliers, channels, kPerChannel);
  StageTailParams(s_tail, p.shifts, channels, kPerChannel);
  ForEachBlock(
      rows, channels, acc, acc_stride, y, y_stride, kPerChannel,
      [&](const int32_t* a, size_t c, T* dst) {
        Q31Block<kPerChannel>(a, p.multipliers + c, p.shifts + c, tensor, k, dst);
      },
      [&](const int32_t* a, T* dst) { Q31Block<kPerChannel>(a, m_tail, s_tail, tensor, k, dst); });
}

template <typename T>
void RequantizeQ31Neon(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y, size_t y_stride,
                       const RequantizeQ31Params& p) {
  if (rows == 0 || channels == 0) return;  // multipliers[0] may not exist
  if (p.per_channel) {
    RequantizeQ31Impl<T, true>(rows, channels, acc, acc_stride, y, y_stride, p);
  } else {
    RequantizeQ31Impl<T, false>(rows, channels, acc, acc_stride, y, y_stride, p);
  }
}

}  // namespace

void requantize_s32_u8_fp32_ukernel__neon(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                          uint8_t* y, size_t y_stride, const RequantizeFp32Params& p) {
  RequantizeFp32Neon(rows, channels, acc, acc_stride, y, y_stride, p);
}

void requantize_s32_s8_fp32_ukernel__neon(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                          int8_t* y, size_t y_stride, const RequantizeFp32Params& p) {
  RequantizeFp32Neon(rows, channels, acc, acc_stride, y, y_stride, p);
}

void requantize_s32_u8_q31_ukernel__neon(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                         uint8_t* y, size_t y_stride, const RequantizeQ31Params& p) {
  RequantizeQ31Neon(rows, channels, acc, acc_stride, y, y_stride, p);
}

void requantize_s32_s8_q31_ukernel__neon(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                         int8_t* y, size_t y_stride, const RequantizeQ31Params& p) {
  RequantizeQ31Neon(rows, channels, acc, acc_stride, y, y_stride, p);
}

}  // namespace octet
