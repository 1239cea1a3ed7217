// Scalar specification of the int8 elementwise operators QAdd and QMul (ops/int8/int8_ops.h): per-tensor u8 / s8
// inputs with their own qparams, an output with its own, numpy broadcasting, in two requantization schemes.
//
// fp32 (default; XNNPACK / PyTorch-qnnpack style; every step float32, no FMA contraction, rne = round half even):
//   QAdd  y = clamp(rne(f32(a - a_zp) * a_mult + f32(b - b_zp) * b_mult) + y_zp, lo, hi)
//         a_mult = f32(a_scale / y_scale), b_mult = f32(b_scale / y_scale)
//   QMul  y = clamp(rne(f32((a - a_zp) * (b - b_zp)) * mult) + y_zp, lo, hi)
//         mult = f32(f32(a_scale * b_scale) / y_scale)
//   The two products of QAdd are rounded to float separately, then added (one more rounding). The product of QMul
//   is exact in int32 and in float (|.| <= 255 * 255).
// q31 (TFLite's integer ADD and MUL reference kernels, numerics.md §2.13):
//   QAdd  left_shift = 20; twice_max = 2 * max(a_scale, b_scale) (double);
//         (a_mult, a_shift) = QuantizeMultiplier(a_scale / twice_max), likewise b;
//         (y_mult, y_shift) = QuantizeMultiplier(twice_max / (2^20 * y_scale)), all in double;
//         sa = MBQM((a - a_zp) * 2^20, a_mult, a_shift), sb likewise,
//         y = clamp(MBQM(sa + sb, y_mult, y_shift) + y_zp, lo, hi)
//         (MBQM = MultiplyByQuantizedMultiplier; TFLite requires every shift <= 0, i.e. every real multiplier < 1:
//         MakeQAddQ31Params fails otherwise, where TFLite would abort.)
//   QMul  (mult, shift) = QuantizeMultiplier(double(a_scale) * double(b_scale) / double(y_scale));
//         y = clamp(MBQM((a - a_zp) * (b - b_zp), mult, shift) + y_zp, lo, hi)
// lo <= hi are the output clamp bounds: [quant_min, quant_max] of y's qparams, lo raised to y_zp by a fused Relu.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/shape.h"
#include "core/status.h"
#include "ops/reference/fixed_point.h"

namespace octet::reference {

// The per-tensor qparams of one operand (or of the output) as the kernels see them.
struct QOperand {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

struct QAddFp32Params {
  float a_mult, b_mult;
  int32_t a_zp, b_zp, y_zp, lo, hi;
};
struct QMulFp32Params {
  float mult;
  int32_t a_zp, b_zp, y_zp, lo, hi;
};
struct QAddQ31Params {
  int32_t a_mult, a_shift, b_mult, b_shift, y_mult, y_shift;
  int32_t left_shift;
  int32_t a_zp, b_zp, y_zp, lo, hi;
};
struct QMulQ31Params {
  int32_t mult, shift;
  int32_t a_zp, b_zp, y_zp, lo, hi;
};

// The multipliers above from the qparams. The fp32 forms fail when a multiplier is not finite or so large
// (>= 2^24) that the sum could not be represented; the q31 forms when TFLite would reject the scales.
Result<QAddFp32Params> MakeQAddFp32Params(QOperand a, QOperand b, QOperand y, int32_t lo, int32_t hi);
Result<QMulFp32Params> MakeQMulFp32Params(QOperand a, QOperand b, QOperand y, int32_t lo, int32_t hi);
Result<QAddQ31Params> MakeQAddQ31Params(QOperand a, QOperand b, QOperand y, int32_t lo, int32_t hi);
Result<QMulQ31Params> MakeQMulQ31Params(QOperand a, QOperand b, QOperand y, int32_t lo, int32_t hi);

// rne(v) + zp clamped to [lo, hi]; v finite or ±Inf (saturates).
inline int32_t RoundAndClamp(float v, int32_t zp, int32_t lo, int32_t hi) {
  double r = std::nearbyint(static_cast<double>(v)) + zp;
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return static_cast<int32_t>(r);
}

inline int32_t QAddFp32Value(int32_t a, int32_t b, const QAddFp32Params& p) {
  const float va = static_cast<float>(a - p.a_zp) * p.a_mult;
  const float vb = static_cast<float>(b - p.b_zp) * p.b_mult;
  return RoundAndClamp(va + vb, p.y_zp, p.lo, p.hi);
}

inline int32_t QMulFp32Value(int32_t a, int32_t b, const QMulFp32Params& p) {
  return RoundAndClamp(static_cast<float>((a - p.a_zp) * (b - p.b_zp)) * p.mult, p.y_zp, p.lo, p.hi);
}

inline int32_t QAddQ31Value(int32_t a, int32_t b, const QAddQ31Params& p) {
  const int32_t sa = MultiplyByQuantizedMultiplier((a - p.a_zp) * (1 << p.left_shift), p.a_mult, p.a_shift);
  const int32_t sb = MultiplyByQuantizedMultiplier((b - p.b_zp) * (1 << p.left_shift), p.b_mult, p.b_shift);
  int64_t r = int64_t{MultiplyByQuantizedMultiplier(sa + sb, p.y_mult, p.y_shift)} + p.y_zp;
  if (r < p.lo) r = p.lo;
  if (r > p.hi) r = p.hi;
  return static_cast<int32_t>(r);
}

inline int32_t QMulQ31Value(int32_t a, int32_t b, const QMulQ31Params& p) {
  int64_t r = int64_t{MultiplyByQuantizedMultiplier((a - p.a_zp) * (b - p.b_zp), p.mult, p.shift)} + p.y_zp;
  if (r < p.lo) r = p.lo;
  if (r > p.hi) r = p.hi;
  return static_cast<int32_t>(r);
}

// y[i] = f(a[ia], b[ib]) over the numpy broadcast of a_shape and b_shape (y has the broadcast shape, row-major),
// element by element with a full index computation: the plainest possible walk, for tests.
template <typename T, typename F>
void BroadcastElementwise(const Shape& a_shape, const T* a, const Shape& b_shape, const T* b, const Shape& y_shape,
                          T* y, F f) {
  const int rank = y_shape.rank();
  const int64_t n = y_shape.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t idx = rem % y_shape.dim(d);
      rem /= y_shape.dim(d);
      const int da = d - (rank - a_shape.rank());
      const int db = d - (rank - b_shape.rank());
      if (da >= 0) {
        if (a_shape.dim(da) != 1) ia += idx * sa;
        sa *= a_shape.dim(da);
      }
      if (db >= 0) {
        if (b_shape.dim(db) != 1) ib += idx * sb;
        sb *= b_shape.dim(db);
      }
    }
    y[i] = static_cast<T>(f(int32_t{a[ia]}, int32_t{b[ib]}));
  }
}

}  // namespace octet::reference
