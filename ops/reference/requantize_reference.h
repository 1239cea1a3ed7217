// Scalar specification of requantization: int32 accumulators to u8 / s8 in the fp32 and q31 schemes
// (DESIGN.md §4, numerics.md §2.12-2.13).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ops/reference/fixed_point.h"

namespace octet::reference {

// fp32 scheme (PyTorch-qnnpack, XNNPACK, ONNX Runtime MLAS):
//   y = clamp(rne(float(acc) * multiplier) + zero_point, lo, hi)
// float(acc) rounds to nearest even; one float32 multiply; lo <= hi are the output clamp bounds (a fused ReLU is
// lo = zero_point). The multiplier is finite and > 0.
inline int32_t RequantizeFp32Value(int32_t acc, float multiplier, int32_t zero_point, int32_t lo, int32_t hi) {
  const float v = static_cast<float>(acc) * multiplier;
  double r = std::nearbyint(static_cast<double>(v)) + zero_point;  // exact; saturates Inf below
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return static_cast<int32_t>(r);
}

// q31 scheme (TFLite, gemmlowp): y = clamp(MultiplyByQuantizedMultiplier(acc, multiplier, shift) + zero_point,
// lo, hi), the sum taken in int64 so it cannot wrap.
inline int32_t RequantizeQ31Value(int32_t acc, int32_t multiplier, int32_t shift, int32_t zero_point, int32_t lo,
                                  int32_t hi) {
  int64_t r = int64_t{MultiplyByQuantizedMultiplier(acc, multiplier, shift)} + zero_point;
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return static_cast<int32_t>(r);
}

// Requantize of quantized graphs (q -> q, per tensor, the fp32 scheme with the input's zero point taken off first):
//   y = RequantizeFp32Value(x - x_zero_point, multiplier, y_zero_point, lo, hi)
//     = clamp(rne(f32(x - x_zp) * m) + y_zp, lo, hi),  m = RequantizeQ8Multiplier(x_scale, y_scale)
// x - x_zp is exact in float32 for 8-bit values.
inline int32_t RequantizeQ8Value(int32_t x, int32_t x_zero_point, float multiplier, int32_t y_zero_point,
                                 int32_t lo, int32_t hi) {
  return RequantizeFp32Value(x - x_zero_point, multiplier, y_zero_point, lo, hi);
}
// m = f32(x_scale * f32(1 / y_scale)): the fp32 scheme's multiplier (DESIGN.md §4) with a weight scale of 1.
inline float RequantizeQ8Multiplier(float x_scale, float y_scale) {
  const float inv_y = 1.0f / y_scale;
  return x_scale * inv_y;
}

// TFLite's QuantizeMultiplier: m = multiplier * 2^(shift - 31) with multiplier a Q31 significand in
// [2^30, 2^31 - 1] (frexp, then round half away from zero); m == 0 gives (0, 0); shifts below -31 flush to
// (0, 0); shifts above 30 saturate to (2^31 - 1, 30). m must be finite and >= 0.
void QuantizeMultiplier(double m, int32_t* multiplier, int32_t* shift);

// Array forms over a [rows x channels] block (channel fastest; strides in elements). Per channel c the parameters
// are multipliers[c] (and shifts[c]) when per_channel, else multipliers[0] (shifts[0]).
struct RequantizeFp32Args {
  const float* multipliers;
  bool per_channel;
  int32_t zero_point;
  int32_t lo;
  int32_t hi;
};
struct RequantizeQ31Args {
  const int32_t* multipliers;
  const int32_t* shifts;
  bool per_channel;
  int32_t zero_point;
  int32_t lo;
  int32_t hi;
};
template <typename T>
void RequantizeFp32(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y, size_t y_stride,
                    const RequantizeFp32Args& args) {
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < channels; ++c) {
      const float m = args.multipliers[args.per_channel ? c : 0];
      y[r * y_stride + c] =
          static_cast<T>(RequantizeFp32Value(acc[r * acc_stride + c], m, args.zero_point, args.lo, args.hi));
    }
  }
}
template <typename T>
void RequantizeQ31(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride, T* y, size_t y_stride,
                   const RequantizeQ31Args& args) {
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < channels; ++c) {
      const size_t k = args.per_channel ? c : 0;
      y[r * y_stride + c] = static_cast<T>(RequantizeQ31Value(acc[r * acc_stride + c], args.multipliers[k],
                                                              args.shifts[k], args.zero_point, args.lo, args.hi));
    }
  }
}

}  // namespace octet::reference
