// The q31 fixed-point primitives on NEON (aarch64 ASIMD), 4 int32 lanes per q register, for every NEON kernel
// (qgemm on neon / neondot / i8mm, qdwconv, requantize). Bit for bit ops/reference/fixed_point.h. Internal linkage,
// as in avx2.h. There is one algorithm per primitive on NEON; the old qgemm epilogue's remainder/threshold divide
// (six instructions) gave way to the fixup + SRSHL form below (three), which gemmlowp's fixedpoint_neon.h also uses.
//
// SaturatingShiftLeft(x, left)            = SQSHL (register count, saturating), left in [0, 31].
// SaturatingRoundingDoublingHighMul(x, m) = SQRDMULH: floor((x*m + 2^30) / 2^31), saturating INT32_MIN^2; for
//   x*m < 0 the reference's truncation of x*m + 1 - 2^30 is the same floor.
// RoundingDivideByPOT(x, minus_e), e in [0, 31], takes -e (SRSHL's operand; SplitShift makes it once).
//   SRSHL by -e computes floor((x + 2^(e-1)) / 2^e) without intermediate overflow (ties toward +Inf) and is the
//   identity for e = 0. The reference rounds negative ties away from zero instead: for x < 0 it rounds up only when
//   the remainder r = x mod 2^e is > 2^(e-1). Rounding x - 1 instead of x does that for x < 0, e >= 1: r >= 1 gives
//   remainder r - 1 (up iff r - 1 >= 2^(e-1)); r = 0, x = q * 2^e, gives x - 1 = (q - 1) * 2^e + 2^e - 1, which
//   rounds up to q as 2^e - 1 >= 2^(e-1). The -1 is (x & -e) >> 31: -1 exactly when x < 0 and e > 0. SQADD keeps
//   x = INT32_MIN (r = 0, the quotient is exact).
#pragma once

#include <arm_neon.h>

namespace octet {
namespace {
namespace neon {

inline int32x4_t SaturatingShiftLeft(int32x4_t x, int32x4_t left) { return vqshlq_s32(x, left); }

inline int32x4_t SaturatingRoundingDoublingHighMul(int32x4_t a, int32x4_t b) { return vqrdmulhq_s32(a, b); }

inline int32x4_t RoundingDivideByPOT(int32x4_t x, int32x4_t minus_exponent) {
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, minus_exponent), 31);
  return vrshlq_s32(vqaddq_s32(x, fixup), minus_exponent);
}

// A QuantizeMultiplier shift split once per group of channels, outside the row loop.
struct Q31Shift {
  int32x4_t left;         // max(shift, 0)
  int32x4_t minus_right;  // min(shift, 0): minus the RoundingDivideByPOT exponent
};

inline Q31Shift SplitShift(int32x4_t shift) {
  const int32x4_t zero = vdupq_n_s32(0);
  return {vmaxq_s32(shift, zero), vminq_s32(shift, zero)};
}

// The reference's MultiplyByQuantizedMultiplier, multiplier in [0, 2^31 - 1].
inline int32x4_t MultiplyByQuantizedMultiplier(int32x4_t x, int32x4_t multiplier, const Q31Shift& shift) {
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(SaturatingShiftLeft(x, shift.left), multiplier),
                             shift.minus_right);
}

}  // namespace neon
}  // namespace
}  // namespace octet
