// Scalar specification of quantize, dequantize and fake-quantize (DESIGN.md §4, numerics.md §2.1).
//
// Every SIMD kernel of the quantize, dequantize and fake_quantize families equals these functions bit for bit.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace octet::reference {

// q = clamp(zero_point + rne(x * inv_scale), quant_min, quant_max), inv_scale = 1.0f / scale computed once in
// float (PyTorch's order: multiply by the float reciprocal, add the zero point after rounding). The product is
// float32 (no FMA). ±Inf and any |x * inv_scale| too large saturate to quant_max / quant_min. NaN gives
// zero_point (the permissive mapping; strict callers reject NaN before or after, see ops/quantize.h).
template <typename T>
inline T QuantizeValue(float x, float inv_scale, int32_t zero_point, int32_t quant_min, int32_t quant_max) {
  const float v = x * inv_scale;
  if (std::isnan(v)) return static_cast<T>(zero_point);
  // rne(v) in double is exact for every float; saturate before converting so no value overflows int64.
  double r = std::nearbyint(static_cast<double>(v)) + zero_point;
  if (r < quant_min) r = quant_min;
  if (r > quant_max) r = quant_max;
  return static_cast<T>(static_cast<int64_t>(r));
}

// TFLite's reference Quantize (numerics.md §2.13-2.14): q = clamp(zero_point + round_half_away(x / scale),
// quant_min, quant_max) with a float32 division (not a multiply by the reciprocal) and ties away from zero.
// ±Inf and any |x / scale| too large saturate; NaN gives zero_point, as QuantizeValue.
template <typename T>
inline T QuantizeValueHalfAway(float x, float scale, int32_t zero_point, int32_t quant_min, int32_t quant_max) {
  const float v = x / scale;
  if (std::isnan(v)) return static_cast<T>(zero_point);
  double r = static_cast<double>(std::round(v)) + zero_point;  // std::round: half away from zero, exact
  if (r < quant_min) r = quant_min;
  if (r > quant_max) r = quant_max;
  return static_cast<T>(static_cast<int64_t>(r));
}

// Whether PyTorch 1.13 maps a value whose scaled form is v (x * inv_scale, or x / scale) to quant_min whatever its
// sign (numerics.md §2.1 item 4): its int64 conversion turns NaN and v >= 2^63 (+Inf included) into INT64_MIN,
// which the clamp takes to the bottom of the range. (-Inf and v <= -2^63 reach quant_min by saturation anyway.)
inline bool PyTorchMapsToQuantMin(float v) { return std::isnan(v) || v >= 9223372036854775808.0f; }

// The Quantize operator's rule for one element (ops/int8/quantize_ops.h; Convert quantizes constants with it too):
// rounding half_even (QuantizeValue: zp + rne(x * inv_scale), PyTorch) or half_away (QuantizeValueHalfAway:
// zp + round_half_away(x / scale), TFLite); with nan_to_quant_min (non_finite "quant_min", PyTorch 1.13) NaN and
// scaled values >= 2^63 give quant_min. inv_scale is 1.0f / scale.
enum class QuantizeOpRounding : uint8_t { kHalfEven, kHalfAway };
template <typename T>
inline T QuantizeOpValue(float x, float scale, float inv_scale, int32_t zero_point, int32_t quant_min,
                         int32_t quant_max, QuantizeOpRounding rounding, bool nan_to_quant_min) {
  const bool half_even = rounding == QuantizeOpRounding::kHalfEven;
  if (nan_to_quant_min && PyTorchMapsToQuantMin(half_even ? x * inv_scale : x / scale)) {
    return static_cast<T>(quant_min);
  }
  return half_even ? QuantizeValue<T>(x, inv_scale, zero_point, quant_min, quant_max)
                   : QuantizeValueHalfAway<T>(x, scale, zero_point, quant_min, quant_max);
}

// x = scale * float(q - zero_point): the difference is exact in int64, converted to float with round-to-nearest-
// even, then one float32 multiply.
template <typename T>
inline float DequantizeValue(T q, float scale, int32_t zero_point) {
  return static_cast<float>(int64_t{q} - int64_t{zero_point}) * scale;
}

// Fake quantize (numerics.md §2.1 item 6):
//   qval = float(zero_point) + rne(x * inv_scale)                (float32)
//   y    = (clamp(qval, quant_min, quant_max) - zero_point) * scale
//   mask = quant_min <= qval <= quant_max                        (1 passes the straight-through gradient)
// NaN gives y = 0 and mask 0. Valid for quant_max - quant_min <= 2^24, so every integer involved is exact in
// float32 (ops/quantize.cc rejects wider ranges).
inline float FakeQuantizeValue(float x, float scale, float inv_scale, int32_t zero_point, int32_t quant_min,
                               int32_t quant_max, uint8_t* mask) {
  const float qval = static_cast<float>(zero_point) + std::nearbyint(x * inv_scale);
  if (std::isnan(qval)) {
    *mask = 0;
    return 0.0f;
  }
  const float lo = static_cast<float>(quant_min);
  const float hi = static_cast<float>(quant_max);
  *mask = (qval >= lo && qval <= hi) ? 1 : 0;
  const float clamped = qval < lo ? lo : (qval > hi ? hi : qval);
  return (clamped - static_cast<float>(zero_point)) * scale;
}

// Array forms over n contiguous elements; the quantize forms return how many inputs were NaN.
size_t QuantizeF32U8(size_t n, const float* x, uint8_t* y, float inv_scale, int32_t zero_point, int32_t quant_min,
                     int32_t quant_max);
size_t QuantizeF32S8(size_t n, const float* x, int8_t* y, float inv_scale, int32_t zero_point, int32_t quant_min,
                     int32_t quant_max);
size_t QuantizeF32S32(size_t n, const float* x, int32_t* y, float inv_scale, int32_t zero_point,
                      int32_t quant_min, int32_t quant_max);
void DequantizeU8F32(size_t n, const uint8_t* q, float* y, float scale, int32_t zero_point);
void DequantizeS8F32(size_t n, const int8_t* q, float* y, float scale, int32_t zero_point);
void DequantizeS32F32(size_t n, const int32_t* q, float* y, float scale, int32_t zero_point);
// `mask` may be null.
size_t FakeQuantizeF32(size_t n, const float* x, float* y, uint8_t* mask, float scale, float inv_scale,
                       int32_t zero_point, int32_t quant_min, int32_t quant_max);

}  // namespace octet::reference
