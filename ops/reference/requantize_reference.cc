// QuantizeMultiplier: a real multiplier as a Q31 significand and a power-of-two shift (TFLite's offline step).
#include "ops/reference/requantize_reference.h"

#include <cmath>

namespace octet::reference {

void QuantizeMultiplier(double m, int32_t* multiplier, int32_t* shift) {
  if (m == 0.0) {
    *multiplier = 0;
    *shift = 0;
    return;
  }
  int exponent = 0;
  const double q = std::frexp(m, &exponent);  // m = q * 2^exponent, q in [0.5, 1)
  int64_t q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));  // ties away
  if (q_fixed == (int64_t{1} << 31)) {
    q_fixed /= 2;
    ++exponent;
  }
  if (exponent > 30) {  // larger multipliers saturate, as TFLite does
    exponent = 30;
    q_fixed = (int64_t{1} << 31) - 1;
  }
  if (exponent < -31) {
    exponent = 0;
    q_fixed = 0;
  }
  *multiplier = static_cast<int32_t>(q_fixed);
  *shift = exponent;
}

}  // namespace octet::reference
