// IEEE half precision (ONNX FLOAT16) and bfloat16 (ONNX BFLOAT16) at octet's
// boundary: octet holds such tensors as f32, so it needs the exact widening of
// their bits and, for Cast to them, the rounding of an f32 to the nearest value.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace octet {

// The f32 value of half-precision bits (exact: every half value is an f32
// value).
inline float HalfBitsToFloat(uint16_t h) {
  const float sign = (h & 0x8000) != 0 ? -1.0f : 1.0f;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0x1f) return mantissa != 0 ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
  return sign * std::ldexp(static_cast<float>(mantissa + 0x400), exponent - 25);
}

// `x` rounded to the nearest half-precision value (ties to even), as an f32;
// beyond the half range it is infinite.
inline float RoundToHalf(float x) {
  if (std::isnan(x) || std::isinf(x) || x == 0.0f) return x;
  const float a = std::fabs(x);
  if (a >= 65520.0f) return std::copysign(INFINITY,
                                          x);  // 65504 is the largest half; 65520 rounds past it
  int e = 0;
  std::frexp(a, &e);                                  // a = m * 2^e, m in [0.5, 1)
  const int quantum_exp = std::max(e - 1, -14) - 10;  // 10 fraction bits; subnormals below 2^-14
  const float q = std::ldexp(1.0f, quantum_exp);
  // a / q and the product are exact (powers of two); nearbyint rounds half to
  // even in the default mode.
  return std::copysign(std::nearbyint(a / q) * q, x);
}

// The f32 value of bfloat16 bits: the upper half of the f32 bits (exact).
inline float Bfloat16BitsToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// `x` rounded to the nearest bfloat16 value (ties to even, as ONNX's reference
// and ONNX Runtime round), as an f32; NaN stays NaN.
inline float RoundToBfloat16(float x) {
  if (std::isnan(x)) return x;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;  // overflow past the largest rounds to infinity
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace octet
