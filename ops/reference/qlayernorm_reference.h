// Scalar specification of QLayerNorm (ops/int8/int8_ops.h): LayerNormalization over the last axis of a u8 / s8
// tensor, integer statistics and a fixed-point rsqrt, one float32 multiply-then-add per element for gamma and beta.
//
// Per row of D codes q_i (x_scale sx, x_zp zx), with x_i = q_i - zx:
//   sum   = sum_i x_i                                   (int32)
//   d_i   = D x_i - sum                                 (int32: D (x_i - mean), exact)
//   T     = sum_i d_i^2 + E                             (int64: D^3 (var + eps / sx^2))
//           E = min(rne(eps D^3 / sx^2), 2^61), computed once in double (QLayerNormParams::eps_term)
//   rsqrt: T = 0 gives n_i = 0; else the even shift 2k with t = T << 2k (or >> -2k) in [2^60, 2^62),
//          s = floor(sqrt(t)) (exact integer square root), r = floor(2^61 / s)
//   n_i   = RoundingShiftRight(d_i r, 61 - k - 23)      (int32: (x_i - mean) / (sqrt(D) std) * 2^23, |n_i| <= 2^23)
//   y_i   = clamp(zy + rne(float(n_i) * m[i] + b[i]), y_quant_min, y_quant_max)
//           m[i] = f32(gamma[i] sqrt(D) / sy / 2^23), b[i] = f32(beta[i] / sy)   (float32, no FMA)
// RoundingShiftRight rounds half away from zero. D is limited to 16384 (T stays below 2^62).
//
// Error against float LayerNormalization of the dequantized input: the integer part is exact up to the 2^-23
// relative rounding of n_i and of r; the output differs from rne(float_ln / sy) + zy by at most 1 LSB (tested).
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"

namespace octet::reference {

inline constexpr int64_t kQLayerNormMaxWidth = 16384;
inline constexpr int kQLayerNormFractionBits = 23;

struct QLayerNormParams {
  int64_t width = 0;  // D, the normalised (last) axis
  int32_t x_zp = 0;
  int64_t eps_term = 0;           // E above
  std::vector<float> multiplier;  // m[c], D entries
  std::vector<float> offset;      // b[c], D entries
  int32_t y_zp = 0, y_quant_min = 0, y_quant_max = 255;
};

// The parameters above from the float ones; fails (naming what) when D is 0 or above kQLayerNormMaxWidth, a scale is
// not positive, or gamma / beta hold a non-finite value or do not have D entries (beta may be empty: zero).
Result<QLayerNormParams> MakeQLayerNormParams(int64_t width, float x_scale, int32_t x_zp, float epsilon,
                                              const std::vector<float>& gamma, const std::vector<float>& beta,
                                              float y_scale, int32_t y_zp, int32_t y_quant_min, int32_t y_quant_max);

// r and k of the fixed-point rsqrt of T > 0 (r / 2^(61 - k) ~ 1 / sqrt(T)).
void FixedPointRsqrt(int64_t t, int64_t* r, int* k);

// One row: D codes in, D codes out (X and Y are uint8_t or int8_t).
template <typename X, typename Y>
void QLayerNormRow(const QLayerNormParams& p, const X* x, Y* y);

}  // namespace octet::reference
