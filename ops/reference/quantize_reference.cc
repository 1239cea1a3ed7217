// Array forms of the quantize / dequantize / fake-quantize specification.
#include "ops/reference/quantize_reference.h"

namespace octet::reference {
namespace {

template <typename T>
size_t QuantizeArray(size_t n, const float* x, T* y, float inv_scale, int32_t zero_point, int32_t quant_min,
                     int32_t quant_max) {
  size_t nans = 0;
  for (size_t i = 0; i < n; ++i) {
    nans += std::isnan(x[i]) ? 1 : 0;
    y[i] = QuantizeValue<T>(x[i], inv_scale, zero_point, quant_min, quant_max);
  }
  return nans;
}

template <typename T>
void DequantizeArray(size_t n, const T* q, float* y, float scale, int32_t zero_point) {
  for (size_t i = 0; i < n; ++i) y[i] = DequantizeValue<T>(q[i], scale, zero_point);
}

}  // namespace

size_t QuantizeF32U8(size_t n, const float* x, uint8_t* y, float inv_scale, int32_t zero_point, int32_t quant_min,
                     int32_t quant_max) {
  return QuantizeArray(n, x, y, inv_scale, zero_point, quant_min, quant_max);
}
size_t QuantizeF32S8(size_t n, const float* x, int8_t* y, float inv_scale, int32_t zero_point, int32_t quant_min,
                     int32_t quant_max) {
  return QuantizeArray(n, x, y, inv_scale, zero_point, quant_min, quant_max);
}
size_t QuantizeF32S32(size_t n, const float* x, int32_t* y, float inv_scale, int32_t zero_point,
                      int32_t quant_min, int32_t quant_max) {
  return QuantizeArray(n, x, y, inv_scale, zero_point, quant_min, quant_max);
}
void DequantizeU8F32(size_t n, const uint8_t* q, float* y, float scale, int32_t zero_point) {
  DequantizeArray(n, q, y, scale, zero_point);
}
void DequantizeS8F32(size_t n, const int8_t* q, float* y, float scale, int32_t zero_point) {
  DequantizeArray(n, q, y, scale, zero_point);
}
void DequantizeS32F32(size_t n, const int32_t* q, float* y, float scale, int32_t zero_point) {
  DequantizeArray(n, q, y, scale, zero_point);
}

size_t FakeQuantizeF32(size_t n, const float* x, float* y, uint8_t* mask, float scale, float inv_scale,
                       int32_t zero_point, int32_t quant_min, int32_t quant_max) {
  size_t nans = 0;
  for (size_t i = 0; i < n; ++i) {
    uint8_t m = 0;
    nans += std::isnan(x[i]) ? 1 : 0;
    y[i] = FakeQuantizeValue(x[i], scale, inv_scale, zero_point, quant_min, quant_max, &m);
    if (mask != nullptr) mask[i] = m;
  }
  return nans;
}

}  // namespace octet::reference
