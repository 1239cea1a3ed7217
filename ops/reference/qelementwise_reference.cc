// The multipliers of QAdd and QMul in the fp32 and q31 schemes (the formulas are in the header).
#include "ops/reference/qelementwise_reference.h"

#include <algorithm>

#include "ops/reference/requantize_reference.h"

namespace octet::reference {
namespace {

// Multipliers this large would let f32(a - a_zp) * mult overflow the float range of the sum's exact integers; no
// sensible pair of scales gives them.
constexpr float kMaxFp32Multiplier = 16777216.0f;  // 2^24

Status CheckFp32Multiplier(float m, const char* what) {
  if (!std::isfinite(m) || m <= 0.0f || m >= kMaxFp32Multiplier) {
    return InvalidArgument("the {} {} is outside (0, 2^24): the scales are too far apart", what, m);
  }
  return OkStatus();
}

// Sets what every binary params struct carries besides its multipliers: the three zero points and the clamp bounds.
template <typename Params>
Params WithZeroPointsAndBounds(Params p, QOperand a, QOperand b, QOperand y, int32_t lo, int32_t hi) {
  p.a_zp = a.zero_point;
  p.b_zp = b.zero_point;
  p.y_zp = y.zero_point;
  p.lo = lo;
  p.hi = hi;
  return p;
}

}  // namespace

Result<QAddFp32Params> MakeQAddFp32Params(QOperand a, QOperand b, QOperand y, int32_t lo, int32_t hi) {
  QAddFp32Params p{};
  p.a_mult = a.scale / y.scale;
  p.b_mult = b.scale / y.scale;
  OCTET_RETURN_IF_ERROR(CheckFp32Multiplier(p.a_mult, "multiplier A_scale / Y_scale"));
  OCTET_RETURN_IF_ERROR(CheckFp32Multiplier(p.b_mult, "multiplier B_scale / Y_scale"));
  return WithZeroPointsAndBounds(p, a, b, y, lo, hi);
}

Result<QMulFp32Params> MakeQMulFp32Params(QOperand a, QOperand b, QOperand y, int32_t lo, int32_t hi) {
  QMulFp32Params p{};
  const float product_scale = a.scale * b.scale;
  p.mult = product_scale / y.scale;
  OCTET_RETURN_IF_ERROR(CheckFp32Multiplier(p.mult, "multiplier A_scale * B_scale / Y_scale"));
  return WithZeroPointsAndBounds(p, a, b, y, lo, hi);
}

Result<QAddQ31Params> MakeQAddQ31Params(QOperand a, QOperand b, QOperand y, int32_t lo, int32_t hi) {
  QAddQ31Params p{};
  p.left_shift = 20;
  const double twice_max = 2.0 * static_cast<double>(std::max(a.scale, b.scale));
  const double real_a = static_cast<double>(a.scale) / twice_max;
  const double real_b = static_cast<double>(b.scale) / twice_max;
  const double real_y = twice_max / (static_cast<double>(1 << p.left_shift) * static_cast<double>(y.scale));
  QuantizeMultiplier(real_a, &p.a_mult, &p.a_shift);
  QuantizeMultiplier(real_b, &p.b_mult, &p.b_shift);
  QuantizeMultiplier(real_y, &p.y_mult, &p.y_shift);
  // TFLite's QuantizeMultiplierSmallerThanOneExp checks shift <= 0 (the inputs' multipliers are <= 1/2 by
  // construction; the output's is below 1 unless Y_scale < max(A_scale, B_scale) / 2^19).
  if (p.y_shift > 0) {
    return InvalidArgument("q31 QAdd needs 2 * max(A_scale, B_scale) / (2^20 * Y_scale) < 1, got {} (Y_scale {} is "
                           "too small for input scales {} and {})",
                           real_y, y.scale, a.scale, b.scale);
  }
  return WithZeroPointsAndBounds(p, a, b, y, lo, hi);
}

Result<QMulQ31Params> MakeQMulQ31Params(QOperand a, QOperand b, QOperand y, int32_t lo, int32_t hi) {
  QMulQ31Params p{};
  const double real = static_cast<double>(a.scale) * static_cast<double>(b.scale) / static_cast<double>(y.scale);
  if (!std::isfinite(real)) return InvalidArgument("q31 QMul multiplier {} is not finite", real);
  QuantizeMultiplier(real, &p.mult, &p.shift);
  return WithZeroPointsAndBounds(p, a, b, y, lo, hi);
}

}  // namespace octet::reference
