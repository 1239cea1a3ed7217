// Fixed-point helpers of the q31 requantization scheme (gemmlowp fixedpoint / TFLite semantics), scalar spec.
#pragma once

#include <cstdint>
#include <limits>

namespace octet::reference {

// (a * b) / 2^31 rounded to nearest with ties toward +infinity (the nudge-and-truncate below equals
// floor((a*b + 2^30) / 2^31) for every product), saturating the one overflow case a == b == INT32_MIN.
// Same computation as gemmlowp's SaturatingRoundingDoublingHighMul and ARM's SQRDMULH.
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == std::numeric_limits<int32_t>::min() && b == std::numeric_limits<int32_t>::min()) {
    return std::numeric_limits<int32_t>::max();
  }
  const int64_t ab = int64_t{a} * int64_t{b};
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));  // '/' truncates toward zero
}

// x / 2^exponent rounded to nearest, ties away from zero (gemmlowp RoundingDivideByPOT). exponent in [0, 31].
inline int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  const int64_t mask = (int64_t{1} << exponent) - 1;
  const int64_t remainder = int64_t{x} & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return static_cast<int32_t>((int64_t{x} >> exponent) + (remainder > threshold ? 1 : 0));
}

// x * 2^exponent saturated to int32, exponent in [0, 31]. TFLite multiplies without saturation (undefined on
// overflow); octet saturates, which is what ARM's SQSHL does.
inline int32_t SaturatingShiftLeft(int32_t x, int exponent) {
  const int64_t v = int64_t{x} * (int64_t{1} << exponent);
  if (v > std::numeric_limits<int32_t>::max()) return std::numeric_limits<int32_t>::max();
  if (v < std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

// TFLite's MultiplyByQuantizedMultiplier: x * multiplier * 2^(shift - 31), rounded as above.
// multiplier in [0, 2^31 - 1], shift in [-31, 30] (what QuantizeMultiplier produces).
inline int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(SaturatingShiftLeft(x, left), multiplier), right);
}

}  // namespace octet::reference
