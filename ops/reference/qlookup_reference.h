// Scalar specification of QLookup (ops/int8/int8_ops.h): a function of one real variable applied to a u8 / s8
// tensor through a 256-entry table,
//   table[c] = QuantizeValue(f(DequantizeValue(c, x_scale, x_zp)), 1.0f / y_scale, y_zp, y_quant_min, y_quant_max)
// for every code c of x's dtype (ops/reference/quantize_reference.h: float32 dequantize, rne quantize with the float
// reciprocal, clamp). f is evaluated in float32:
//   HardSwish    x * min(max(x + 3, 0), 6) / 6                 (PyTorch's hardswish; ONNX's alpha 1/6, beta 1/2)
//   Sigmoid      1 / (1 + exp(-x))
//   Tanh         tanh(x)
//   HardSigmoid  max(0, min(1, alpha * x + beta))              (alpha 0.2, beta 0.5 by default, as ONNX)
//   LeakyRelu    x >= 0 ? x : alpha * x                        (alpha 0.01 by default, as ONNX)
//   Gelu         0.5 x (1 + erf(x / sqrt 2)), or with the node's approximate = "tanh"
//                0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))  (ONNX Gelu, opset 20)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/dtype.h"
#include "core/status.h"

namespace octet::reference {

enum class LookupFunction { kHardSwish, kSigmoid, kTanh, kHardSigmoid, kLeakyRelu, kGelu, kGeluTanh };

// "HardSwish", "Sigmoid", "Tanh", "HardSigmoid", "LeakyRelu", "Gelu"; `approximate` (Gelu's attribute, "none" or
// "tanh") picks the Gelu form and must be "none" for the others.
Result<LookupFunction> ParseLookupFunction(std::string_view name, std::string_view approximate = "none");
std::string_view LookupFunctionName(LookupFunction f);

float ApplyLookupFunction(LookupFunction f, float alpha, float beta, float x);

struct QLookupParams {
  LookupFunction function = LookupFunction::kSigmoid;
  float alpha = 0.0f, beta = 0.0f;
  DType x_dtype = DType::kU8;
  float x_scale = 1.0f;
  int32_t x_zp = 0;
  float y_scale = 1.0f;
  int32_t y_zp = 0, y_quant_min = 0, y_quant_max = 255;
};

// The table indexed by the input code's byte (static_cast<uint8_t>(x)); entries are y codes.
std::array<int32_t, 256> BuildLookupTable(const QLookupParams& p);

// The lookup itself, the spec of the lut kernels (ops/ukernels/lut.h): y[i] = table[x[i]] over bytes.
inline void LookupBytes(const uint8_t* table, const uint8_t* x, size_t n, uint8_t* y) {
  for (size_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace octet::reference
